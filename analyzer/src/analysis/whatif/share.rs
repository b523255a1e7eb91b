//! Sharing a replay's work out between threads. The walk produces the next
//! block of steps while the lane groups follow the current one, and the
//! walk costs about as much as a group. The groups are handed out longest
//! first: the thread that starts them takes the longest, and the walk's
//! thread, once its block is written, takes a shorter one that is left,
//! instead of the longest coming last to whichever thread is free (on 2
//! cores, 0.6 ms per block of the 50M-event benchmark against 0.7).

/// Orders groups (with their cost on the last blocks) longest first.
pub(super) fn longest_first<G>(groups: &mut [(G, &mut u64)]) {
    groups.sort_by_key(|(_, c)| std::cmp::Reverse(**c));
}

/// A cost measured on one block, smoothed over the last few: a thread
/// descheduled for a moment must not reorder the groups at once.
pub(super) fn smoothed(old: u64, new: u64) -> u64 {
    old.saturating_mul(3).saturating_add(new) / 4
}

/// Splits `n` lanes of one kind (of `total` lanes) into groups: one group
/// per thread over all lanes, this kind's share of them. A group's own cost
/// per step is paid once per group, so more groups than threads only add
/// work (on 2 cores, 4 groups cost 30% more than 2 in all).
pub(super) fn group_sizes(n: usize, total: usize, threads: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let total = total.max(n);
    let want = threads.clamp(1, total);
    let groups = ((want * n + total / 2) / total).clamp(1, n);
    (0..groups)
        .map(|i| n / groups + usize::from(i < n % groups))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_longest_group_comes_first() {
        let mut costs = [3u64, 9, 1, 9];
        let mut groups: Vec<(usize, &mut u64)> = costs.iter_mut().enumerate().collect();
        longest_first(&mut groups);
        let order: Vec<usize> = groups.iter().map(|g| g.0).collect();
        assert_eq!(order, vec![1, 3, 0, 2]);
    }

    #[test]
    fn smoothing_follows_a_lasting_change_only_gradually() {
        assert_eq!(smoothed(80, 0), 60);
        assert_eq!(smoothed(80, 160), 100);
        let mut c = 4;
        for _ in 0..40 {
            c = smoothed(c, 300_000);
        }
        assert!(c > 299_000, "{c}");
        assert_eq!(smoothed(u64::MAX, 0), u64::MAX / 4);
        assert_eq!(smoothed(u64::MAX, u64::MAX), u64::MAX / 4);
    }

    #[test]
    fn groups_split_each_kind_evenly() {
        // 9 lanes on 2 threads: a group per kind.
        assert_eq!(group_sizes(4, 9, 2), vec![4]);
        assert_eq!(group_sizes(5, 9, 2), vec![5]);
        // One kind only: split in two.
        assert_eq!(group_sizes(9, 9, 2), vec![5, 4]);
        assert_eq!(group_sizes(1, 1, 2), vec![1]);
        assert_eq!(group_sizes(0, 3, 2), Vec::<usize>::new());
        assert_eq!(group_sizes(3, 3, 1), vec![3]);
        // Many threads: a lane each.
        assert_eq!(group_sizes(5, 9, 16), vec![1; 5]);
        for (n, total, threads) in [(7, 7, 2), (2, 9, 8), (9, 9, 16), (6, 12, 3), (1, 9, 2)] {
            let sizes = group_sizes(n, total, threads);
            assert_eq!(sizes.iter().sum::<usize>(), n);
            assert!(sizes.iter().all(|&s| s >= 1));
            assert!(sizes.iter().max().unwrap() - sizes.iter().min().unwrap() <= 1);
        }
    }
}
