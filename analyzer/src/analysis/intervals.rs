//! Interval arithmetic on sorted, disjoint [start, end) lists.

use crate::model::Ns;

/// Union of possibly overlapping intervals, sorted and merged.
pub fn union(mut v: Vec<(Ns, Ns)>) -> Vec<(Ns, Ns)> {
    v.retain(|&(a, b)| b > a);
    v.sort_unstable();
    let mut out: Vec<(Ns, Ns)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

/// Total length.
pub fn total(v: &[(Ns, Ns)]) -> Ns {
    v.iter().map(|&(a, b)| b - a).sum()
}

/// The gaps of a merged list inside [lo, hi).
pub fn gaps(merged: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Vec<(Ns, Ns)> {
    let mut out = Vec::new();
    let mut t = lo;
    for &(a, b) in merged {
        if b <= t {
            continue;
        }
        if a >= hi {
            break;
        }
        if a > t {
            out.push((t, a.min(hi)));
        }
        t = t.max(b);
        if t >= hi {
            break;
        }
    }
    if t < hi {
        out.push((t, hi));
    }
    out
}

/// Length of the overlap of a merged list with [lo, hi).
pub fn overlap(merged: &[(Ns, Ns)], lo: Ns, hi: Ns) -> Ns {
    let i = merged.partition_point(|&(_, b)| b <= lo);
    merged[i..]
        .iter()
        .take_while(|&&(a, _)| a < hi)
        .map(|&(a, b)| b.min(hi) - a.max(lo))
        .filter(|&d| d > 0)
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn union_gaps_overlap() {
        let u = union(vec![(5, 10), (0, 3), (2, 4), (10, 12), (20, 20)]);
        assert_eq!(u, vec![(0, 4), (5, 12)]);
        assert_eq!(total(&u), 11);
        assert_eq!(gaps(&u, 0, 15), vec![(4, 5), (12, 15)]);
        assert_eq!(gaps(&u, -2, 3), vec![(-2, 0)]);
        assert_eq!(overlap(&u, 3, 6), 2);
        assert_eq!(overlap(&u, 12, 20), 0);
    }
}
