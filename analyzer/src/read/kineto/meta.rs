//! Top-level keys of a Kineto document other than `traceEvents`:
//! `deviceProperties`, `distributedInfo`, `baseTimeNanoseconds`, `host_name`.
//! They are small, so they go through `serde_json::Value`, and any shape is
//! tolerated (a key of the wrong shape reads as absent).

use serde_json::Value;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceProps {
    pub id: u32,
    pub name: String,
    pub memory_bytes: u64,
    pub sm_count: u32,
    pub cc: (u32, u32),
    /// `gcnArchName` (ROCm), when the trace has it.
    pub arch_name: String,
}

#[derive(Debug, Clone, Default)]
pub struct Meta {
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub devices: Vec<DeviceProps>,
    pub base_time_ns: Option<i64>,
    pub host_name: Option<String>,
}

fn uint(v: &Value, key: &str) -> Option<u64> {
    let x = v.get(key)?;
    x.as_u64()
        .or_else(|| x.as_str().and_then(|s| s.trim().parse().ok()))
}

fn small(v: &Value, key: &str) -> Option<u32> {
    uint(v, key).and_then(|x| u32::try_from(x).ok())
}

impl Meta {
    pub fn device_properties(&mut self, v: &Value) {
        let Some(list) = v.as_array() else { return };
        self.devices = list
            .iter()
            .filter_map(|d| {
                Some(DeviceProps {
                    id: small(d, "id")?,
                    name: d
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                    memory_bytes: uint(d, "totalGlobalMem").unwrap_or(0),
                    sm_count: small(d, "numSms").unwrap_or(0),
                    cc: (
                        small(d, "computeMajor").unwrap_or(0),
                        small(d, "computeMinor").unwrap_or(0),
                    ),
                    arch_name: d
                        .get("gcnArchName")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                })
            })
            .collect();
    }

    pub fn distributed_info(&mut self, v: &Value) {
        self.rank = small(v, "rank");
        self.world_size = small(v, "world_size");
    }

    pub fn base_time(&mut self, v: &Value) {
        self.base_time_ns = v.as_i64();
    }

    /// Takes what `later` (keys after `traceEvents`) says over what we had.
    pub fn overlay(&mut self, later: Meta) {
        self.rank = later.rank.or(self.rank);
        self.world_size = later.world_size.or(self.world_size);
        if !later.devices.is_empty() {
            self.devices = later.devices;
        }
        self.base_time_ns = later.base_time_ns.or(self.base_time_ns);
        self.host_name = later.host_name.or(self.host_name.take());
    }

    pub fn host_name(&mut self, v: &Value) {
        self.host_name = v.as_str().map(str::to_owned);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerant_shapes() {
        let mut m = Meta::default();
        m.device_properties(&serde_json::json!([
            {"id": 0, "name": "NVIDIA H100", "totalGlobalMem": 85, "numSms": 132,
             "computeMajor": 9, "computeMinor": 0},
            {"name": "no id"},
            "junk"
        ]));
        assert_eq!(m.devices.len(), 1);
        assert_eq!(m.devices[0].cc, (9, 0));
        m.distributed_info(&serde_json::json!({"rank": "3", "world_size": 8}));
        assert_eq!((m.rank, m.world_size), (Some(3), Some(8)));
        m.distributed_info(&serde_json::json!([1]));
        assert_eq!(m.rank, None);
    }
}
