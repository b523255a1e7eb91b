//! Debug annotations (the "Arguments" pane in the Perfetto UI) for the event
//! being built. Names and string values are interned.

use super::proto::DebugAnnotation;
use super::writer::PacketWriter;
use crate::model::{StrId, Strings};

impl PacketWriter<'_> {
    fn arg(&mut self, name: &'static str) -> DebugAnnotation {
        DebugAnnotation {
            name_iid: Some(self.intern.arg_name(name)),
            ..DebugAnnotation::default()
        }
    }

    pub fn arg_uint(&mut self, name: &'static str, v: u64) {
        let a = DebugAnnotation {
            uint_value: Some(v),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }

    pub fn arg_int(&mut self, name: &'static str, v: i64) {
        let a = DebugAnnotation {
            int_value: Some(v),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }

    pub fn arg_double(&mut self, name: &'static str, v: f64) {
        let a = DebugAnnotation {
            double_value: Some(v),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }

    pub fn arg_bool(&mut self, name: &'static str, v: bool) {
        let a = DebugAnnotation {
            bool_value: Some(v),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }

    pub fn arg_pointer(&mut self, name: &'static str, v: u64) {
        let a = DebugAnnotation {
            pointer_value: Some(v),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }

    pub fn arg_text(&mut self, name: &'static str, v: &str) {
        let iid = self.intern.value_text(v);
        self.push_str_arg(name, iid);
    }

    pub fn arg_str(&mut self, name: &'static str, id: StrId, strings: &Strings) {
        let iid = self.intern.value_str(id, strings);
        self.push_str_arg(name, iid);
    }

    /// A string arg whose value is already interned.
    pub fn arg_interned(&mut self, name: &'static str, iid: u64) {
        self.push_str_arg(name, iid);
    }

    fn push_str_arg(&mut self, name: &'static str, iid: u64) {
        let a = DebugAnnotation {
            string_value_iid: Some(iid),
            ..self.arg(name)
        };
        self.te().debug_annotations.push(a);
    }
}
