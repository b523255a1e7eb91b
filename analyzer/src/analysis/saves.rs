//! Checkpoint saves. A thread that writes a file in one burst (`torch.save`,
//! `np.save`, a logger flushing a file) spends the CPU time between its
//! writes serializing data for that same file. The fix for a stall on such a
//! save, saving asynchronously from a background thread or process, takes
//! that CPU time off the training thread along with the writes. So it is part
//! of the save: a CPU stretch between two calls on one file, at least one of
//! them a write (or fsync), counts as writing that file. Reads are left as
//! they are: the CPU between two reads is the job's own work on the data,
//! which the read fix (data in RAM) keeps.

use super::activity::{Act, Seg, Sub};
use crate::model::Ns;

/// Longest CPU stretch between two calls on one file that still belongs to
/// its save. Pickling between the writes of a `torch.save` takes
/// milliseconds; a stretch longer than this is other work.
pub const SAVE_GAP_NS: Ns = 50_000_000;

/// Relabels the CPU stretches inside file saves (see the module comment) as
/// writes of the file, and joins the segments that then continue each other.
/// `segs` is a thread's segments, in order and without gaps.
pub fn absorb(segs: &mut Vec<Seg>) {
    let mut changed = false;
    // The last I/O segment on a file that could open a save's gap, and
    // whether only plain CPU work followed it.
    let mut from: Option<usize> = None;
    for j in 0..segs.len() {
        let s = segs[j];
        if plain_cpu(&s) {
            continue;
        }
        if let Some(i) = from
            && joins_save(&segs[i], &s)
            && j > i + 1
            && s.start - segs[i].end <= SAVE_GAP_NS
        {
            for g in &mut segs[i + 1..j] {
                *g = Seg {
                    act: Act::Io,
                    sub: Sub::WRITE,
                    what: s.what,
                    launch_ns: 0,
                    ..*g
                };
            }
            changed = true;
        }
        from = file_call(&s).then_some(j);
    }
    if changed {
        segs.dedup_by(|b, a| {
            let join = a.act == Act::Io
                && a.end == b.start
                && (a.sub, a.what) == (b.sub, b.what)
                && b.act == Act::Io;
            if join {
                a.end = b.end;
            }
            join
        });
    }
}

/// CPU work with no launch, GIL wait or sleep in it.
fn plain_cpu(s: &Seg) -> bool {
    s.act == Act::Cpu && s.sub == Sub::NONE && s.launch_ns == 0
}

/// An open, close, write or fsync of a known file.
fn file_call(s: &Seg) -> bool {
    s.act == Act::Io && s.what != 0 && matches!(s.sub, Sub::OPEN | Sub::WRITE)
}

/// Whether the CPU between file calls `a` and `b` is part of a save: the same
/// file, and one of the two calls writes it.
fn joins_save(a: &Seg, b: &Seg) -> bool {
    file_call(a) && file_call(b) && a.what == b.what && (a.sub == Sub::WRITE || b.sub == Sub::WRITE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Ns = 1_000_000;

    fn seg(start: Ns, end: Ns, act: Act, sub: Sub, what: u32) -> Seg {
        Seg {
            start,
            end,
            what,
            launch_ns: 0,
            own_ns: 0,
            act,
            sub,
        }
    }

    fn cpu(start: Ns, end: Ns) -> Seg {
        seg(start, end, Act::Cpu, Sub::NONE, 0)
    }

    #[test]
    fn the_cpu_between_the_open_the_writes_and_the_close_of_a_file_is_its_save() {
        let mut v = vec![
            cpu(0, 10),
            seg(10, 11, Act::Io, Sub::OPEN, 7),
            cpu(11, 15),
            seg(15, 20, Act::Io, Sub::WRITE, 7),
            cpu(20, 21),
            seg(21, 30, Act::Io, Sub::WRITE, 7),
            cpu(30, 31),
            seg(31, 32, Act::Io, Sub::OPEN, 7),
            cpu(32, 40),
        ];
        absorb(&mut v);
        assert_eq!(
            v,
            vec![
                cpu(0, 10),
                seg(10, 11, Act::Io, Sub::OPEN, 7),
                seg(11, 31, Act::Io, Sub::WRITE, 7),
                seg(31, 32, Act::Io, Sub::OPEN, 7),
                cpu(32, 40),
            ]
        );
    }

    #[test]
    fn reads_other_files_launches_and_long_stretches_are_kept() {
        let reads = vec![
            seg(0, 5, Act::Io, Sub::READ, 7),
            cpu(5, 6),
            seg(6, 9, Act::Io, Sub::READ, 7),
        ];
        let open_close = vec![
            seg(0, 1, Act::Io, Sub::OPEN, 7),
            cpu(1, 6),
            seg(6, 7, Act::Io, Sub::OPEN, 7),
        ];
        let two_files = vec![
            seg(0, 5, Act::Io, Sub::WRITE, 7),
            cpu(5, 6),
            seg(6, 9, Act::Io, Sub::WRITE, 8),
        ];
        let launch = vec![
            seg(0, 5, Act::Io, Sub::WRITE, 7),
            Seg {
                launch_ns: 1,
                ..cpu(5, 6)
            },
            seg(6, 9, Act::Io, Sub::WRITE, 7),
        ];
        let sync_between = vec![
            seg(0, 5, Act::Io, Sub::WRITE, 7),
            cpu(5, 6),
            seg(6, 7, Act::Sync, Sub::ITEM, 0),
            cpu(7, 8),
            seg(8, 9, Act::Io, Sub::WRITE, 7),
        ];
        let long = vec![
            seg(0, 5, Act::Io, Sub::WRITE, 7),
            cpu(5, 6 + SAVE_GAP_NS),
            seg(6 + SAVE_GAP_NS, 7 + SAVE_GAP_NS, Act::Io, Sub::WRITE, 7),
        ];
        for v in [reads, open_close, two_files, launch, sync_between, long] {
            let mut w = v.clone();
            absorb(&mut w);
            assert_eq!(w, v);
        }
    }

    #[test]
    fn a_gap_of_several_cpu_segments_is_absorbed_whole() {
        let mut v = vec![
            seg(0, MS, Act::Io, Sub::WRITE, 3),
            cpu(MS, 2 * MS),
            seg(2 * MS, 3 * MS, Act::Cpu, Sub::NONE, 0),
            seg(3 * MS, 4 * MS, Act::Io, Sub::WRITE, 3),
        ];
        absorb(&mut v);
        assert_eq!(v, vec![seg(0, 4 * MS, Act::Io, Sub::WRITE, 3)]);
    }
}
