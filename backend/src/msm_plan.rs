//! Planning an MSM: window widths, bucket layouts and which base vectors get shifted bases —
//! the arithmetic every GPU backend shares, with each backend's measured costs as parameters.
//!
//! Pippenger with signed digits: a 255-bit scalar is cut into `windows(c)` digits of c bits in
//! [−2^(c−1), 2^(c−1)], so a window needs 2^(c−1) buckets. Three layouts:
//! - **windowed**: one set of buckets a window, over the bases themselves;
//! - **shared**: one set of buckets in all, over *shifted bases* made once per uploaded
//!   vector (2^(c·w)·P for every window w): every window's digit lands in the same buckets,
//!   so there is one set to fill, scan and reduce, at `windows` times the bases' memory;
//! - **grouped**: between the two, for vectors whose full table would not fit: a table of
//!   k shifts (2^(c·j)·P for j < k), and window w = k·s + j adds 2^(c·j)·P to set s, whose sum
//!   weighs 2^(c·k·s). ⌈W/k⌉ sets at k times the bases' memory: wide windows keep the entries
//!   a bucket that narrow ones have, and the reduction stays small.
//!
//! Work is counted in mixed additions: one per (point, window), and a backend-specific weight
//! per bucket for merging and reducing it ([`Layout::cost`]). The weights are measured, not
//! derived: docs/perf says where each came from.

use std::ops::RangeInclusive;

/// Widths the windowed layout chooses from (2^19 buckets a window at most).
pub const WINDOW_WIDTHS: RangeInclusive<u32> = 4..=20;
/// Widths shifted bases choose from (one set of at most 2^19 buckets).
pub const TABLE_WIDTHS: RangeInclusive<u32> = 8..=20;
/// Which base vectors get shifted bases unless a backend or its caller says otherwise:
/// 2^18 ≤ len < 2^23. Below, the windowed layout's few extra additions gain little; above, the
/// tables outgrow memory unless the backend measured them worth it (CUDA's G1 reaches 2^25:
/// `g16_cuda::DEFAULT_TABLES`).
pub const DEFAULT_TABLES: (u32, u32) = (18, 23);

/// Windows of c-bit signed digits for a 255-bit scalar: the top digit's carry needs a 256th
/// bit, so ⌈256/c⌉ (which is ⌈255/c⌉, plus one where c divides 255).
pub const fn windows(c: u32) -> u32 {
    256u32.div_ceil(c)
}

/// The shape of the buckets of one MSM.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Window width in bits.
    pub c: u32,
    pub windows: u32,
    /// Bucket sets: `windows` (windowed), 1 (shared) or ⌈windows/shifts⌉ (grouped).
    pub sets: u32,
    /// Windows a set, and multiples of each base in the table the entries index: 1
    /// (windowed: the bases themselves), `windows` (shared) or k (grouped).
    pub shifts: u32,
}

impl Layout {
    pub const fn windowed(c: u32) -> Layout {
        Layout { c, windows: windows(c), sets: windows(c), shifts: 1 }
    }

    pub const fn shared(c: u32) -> Layout {
        Layout { c, windows: windows(c), sets: 1, shifts: windows(c) }
    }

    /// Sets of at most k windows over a table of as many shifts (k at least 1, at most the
    /// windows: then shared): the ⌈W/k⌉ sets take ⌈W/sets⌉ windows each, the fewest shifts
    /// that make that many sets (13 windows and k = 6: 3 sets of 5, not of 6, 6 and 1).
    pub fn grouped(c: u32, k: u32) -> Layout {
        let w = windows(c);
        let sets = w.div_ceil(k.clamp(1, w));
        Layout { c, windows: w, sets, shifts: w.div_ceil(sets) }
    }

    pub fn is_shared(&self) -> bool {
        self.sets == 1 && self.windows > 1
    }

    /// Whether the entries index a table of shifted bases (shared or grouped).
    pub fn has_table(&self) -> bool {
        self.shifts > 1
    }

    /// Buckets a set: 2^(c−1).
    pub const fn half(&self) -> u32 {
        1 << (self.c - 1)
    }

    pub fn buckets(&self) -> u64 {
        u64::from(self.sets) * u64::from(self.half())
    }

    /// Bucket entries of n scalars: one a (scalar, window).
    pub fn entries(&self, n: usize) -> u64 {
        n as u64 * u64::from(self.windows)
    }

    /// The work of n scalars, in mixed additions: an addition an entry and `per_bucket` a
    /// bucket.
    pub fn cost(&self, n: usize, per_bucket: u64) -> u64 {
        self.entries(n) + per_bucket * self.buckets()
    }
}

/// The layout of least cost among `widths` (ties go to the narrower window).
fn cheapest(n: usize, widths: RangeInclusive<u32>, per_bucket: u64, make: impl Fn(u32) -> Layout) -> Layout {
    widths.map(&make).min_by_key(|l| (l.cost(n, per_bucket), l.c)).unwrap_or_else(|| make(16))
}

/// How a backend picks the windowed layout's width.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowRule {
    /// ⌈log2 n⌉ − 6, between 4 and `max`: where a wide window's bucket reduction costs more
    /// than counting says (the CUDA backend at 2^24: 16 beat every width from 13 to 20).
    FromLength { max: u32 },
    /// The least [`Layout::cost`] over [`WINDOW_WIDTHS`] with this weight a bucket.
    LeastCost { per_bucket: u64 },
}

/// Settings of the planner a caller may override (docs/tuning.md); checked when read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MsmTuning {
    /// The windowed layout's width, instead of the backend's rule (within [`WINDOW_WIDTHS`]).
    pub window: Option<u32>,
    /// The width of shifted bases, instead of the least cost (within [`TABLE_WIDTHS`]).
    pub table_window: Option<u32>,
    /// Base vectors of 2^min ≤ len < 2^max points get shifted bases; `None`: none do.
    pub tables: Option<(u32, u32)>,
}

impl Default for MsmTuning {
    fn default() -> Self {
        MsmTuning { window: None, table_window: None, tables: Some(DEFAULT_TABLES) }
    }
}

/// A backend's planner: its measured rules and the caller's tuning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planner {
    pub windowed: WindowRule,
    /// The weight a bucket of shifted bases costs, to pick their width.
    pub table_per_bucket: u64,
    pub tuning: MsmTuning,
}

impl Planner {
    /// The windowed layout for n scalars.
    pub fn windowed(&self, n: usize) -> Layout {
        if let Some(c) = self.tuning.window {
            return Layout::windowed(c.clamp(*WINDOW_WIDTHS.start(), *WINDOW_WIDTHS.end()));
        }
        match self.windowed {
            WindowRule::FromLength { max } => {
                let log = usize::BITS - n.max(1).leading_zeros(); // ⌈log2 n⌉, or one more
                Layout::windowed(log.saturating_sub(6).clamp(*WINDOW_WIDTHS.start(), max))
            }
            WindowRule::LeastCost { per_bucket } => cheapest(n, WINDOW_WIDTHS, per_bucket, Layout::windowed),
        }
    }

    /// The layout of shifted bases for a vector of `len` points, or `None` where it gets none:
    /// outside the tuning's range, or with 2^31 entries or more (32-bit indices).
    pub fn table(&self, len: usize) -> Option<Layout> {
        let (min, max) = self.tuning.tables?;
        if len < 1usize << min.min(40) || len >= 1usize << max.min(40) {
            return None;
        }
        let layout = match self.tuning.table_window {
            Some(c) => Layout::shared(c.clamp(*TABLE_WIDTHS.start(), *TABLE_WIDTHS.end())),
            None => cheapest(len, TABLE_WIDTHS, self.table_per_bucket, Layout::shared),
        };
        (layout.entries(len) < 1 << 31).then_some(layout)
    }

    /// The grouped layout over a table of `shifts` multiples for a vector of `len` points
    /// beyond the shared layout's range (`len` ≥ 2^max of the tuning's range), or `None`:
    /// inside or below the range, with tables off, with fewer than 2 shifts, or where its
    /// entries or the table's indices reach 2^31. Its width: the tuning's table width, or the
    /// least cost.
    pub fn grouped(&self, len: usize, shifts: u32) -> Option<Layout> {
        let (_, max) = self.tuning.tables?;
        if len < 1usize << max.min(40) {
            return None;
        }
        self.grouped_at_any_length(len, shifts)
    }

    /// `grouped` without its range: the grouped layout for `len` points wherever it falls,
    /// for a vector inside the shared range whose full table does not fit in memory. `None`
    /// with tables off, with fewer than 2 shifts, or where its entries or the table's indices
    /// reach 2^31.
    pub fn grouped_at_any_length(&self, len: usize, shifts: u32) -> Option<Layout> {
        self.tuning.tables?;
        if shifts < 2 {
            return None;
        }
        let layout = match self.tuning.table_window {
            Some(c) => Layout::grouped(c.clamp(*TABLE_WIDTHS.start(), *TABLE_WIDTHS.end()), shifts),
            None => cheapest(len, TABLE_WIDTHS, self.table_per_bucket, |c| Layout::grouped(c, shifts)),
        };
        let fits = layout.entries(len) < 1 << 31 && (len as u64) * u64::from(layout.shifts) < 1 << 31;
        (fits && layout.has_table()).then_some(layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_cover_a_signed_255_bit_scalar() {
        assert_eq!((windows(16), windows(17), windows(15), windows(20)), (16, 16, 18, 13));
        for c in 1..=24 {
            let w = windows(c);
            assert!(w * c > 255, "c = {c}: the carry of the top digit needs room");
            // The same count as ⌈255/c⌉ + [c divides 255], the rule stated for signed digits.
            assert_eq!(w, 255u32.div_ceil(c) + u32::from(255 % c == 0), "c = {c}");
        }
    }

    #[test]
    fn layouts_count_buckets_and_work() {
        let w = Layout::windowed(16);
        let s = Layout::shared(16);
        assert_eq!((w.sets, s.sets, w.half()), (16, 1, 1 << 15));
        assert_eq!(w.buckets(), 16 << 15);
        assert_eq!(s.cost(100, 13), 1600 + 13 * (1 << 15));
        assert!(s.is_shared() && !w.is_shared());
        assert_eq!((w.shifts, s.shifts), (1, 16));
        // Grouped: 13 windows at c = 20 in sets of 4 (the last of one window), 3 in sets of 5.
        let g = Layout::grouped(20, 4);
        assert_eq!((g.windows, g.sets, g.shifts, g.buckets()), (13, 4, 4, 4 << 19));
        assert!(g.has_table() && !g.is_shared() && !w.has_table());
        assert_eq!(Layout::grouped(20, 5).sets, 3);
        // The fewest shifts for the sets: k = 6 gives 3 sets, which 5 shifts make; 12 gives 2: 7.
        assert_eq!(Layout::grouped(20, 6), Layout::grouped(20, 5));
        assert_eq!((Layout::grouped(20, 12).sets, Layout::grouped(20, 12).shifts), (2, 7));
        for c in 4..=20 {
            for k in 1..=windows(c) {
                let l = Layout::grouped(c, k);
                assert!(l.shifts <= k && l.sets * l.shifts >= l.windows, "c = {c}, k = {k}: {l:?}");
                assert!((l.sets - 1) * l.shifts < l.windows, "c = {c}, k = {k}: no empty set: {l:?}");
            }
        }
        assert_eq!(Layout::grouped(20, 13), Layout::shared(20), "k = W: shared");
        assert_eq!(Layout::grouped(20, 40), Layout::shared(20), "k beyond W: shared");
        assert_eq!(Layout::grouped(16, 1), Layout::windowed(16), "k = 1: windowed");
    }

    #[test]
    fn grouped_tables_start_where_the_shared_range_ends() {
        let p =
            Planner { windowed: WindowRule::FromLength { max: 16 }, table_per_bucket: 3, tuning: MsmTuning::default() };
        let top = 1usize << DEFAULT_TABLES.1;
        assert_eq!(p.grouped(top - 1, 4), None, "inside the shared range");
        assert_eq!(p.grouped(top, 4), Some(Layout::grouped(20, 4)));
        assert_eq!(p.grouped(1 << 27, 4), Some(Layout::grouped(20, 4)), "13·2^27 entries < 2^31");
        assert_eq!(p.grouped(1 << 27, 1), None, "one shift: no table");
        assert_eq!(p.grouped(1 << 28, 4), None, "13·2^28 entries reach 2^31");
        assert_eq!(p.grouped(1 << 26, 40), Some(Layout::shared(20)), "as many shifts as windows: shared");
        let tuned = Planner { tuning: MsmTuning { table_window: Some(18), ..MsmTuning::default() }, ..p };
        assert_eq!(tuned.grouped(top, 3), Some(Layout::grouped(18, 3)));
        let narrow = Planner { tuning: MsmTuning { table_window: Some(16), ..MsmTuning::default() }, ..p };
        assert_eq!(narrow.grouped(1 << 27, 16), None, "16·2^27 entries and table indices reach 2^31");
        let off = Planner { tuning: MsmTuning { tables: None, ..MsmTuning::default() }, ..p };
        assert_eq!(off.grouped(top, 4), None, "tables off");
    }

    #[test]
    fn the_rules_pick_the_measured_widths() {
        let by_length =
            Planner { windowed: WindowRule::FromLength { max: 16 }, table_per_bucket: 3, tuning: MsmTuning::default() };
        let by_cost = Planner {
            windowed: WindowRule::LeastCost { per_bucket: 3 },
            table_per_bucket: 13,
            tuning: MsmTuning::default(),
        };
        assert_eq!(by_length.windowed(1 << 24).c, 16);
        assert_eq!(by_length.windowed(1 << 12).c, 7);
        assert_eq!(by_length.windowed(0).c, 4);
        assert_eq!(by_cost.windowed(1 << 20).c, 16);
        // Shifted bases: at 3 a bucket, c = 20 at 2^20 and 2^22; at 13, 16 at 2^20, 20 at 2^22.
        assert_eq!(by_length.table(1 << 20), Some(Layout::shared(20)));
        assert_eq!(by_length.table(1 << 22), Some(Layout::shared(20)));
        assert_eq!(by_cost.table(1 << 20), Some(Layout::shared(16)));
        assert_eq!(by_cost.table(1 << 22), Some(Layout::shared(20)));
        // Outside the range, none.
        assert_eq!(by_cost.table((1 << 18) - 1), None);
        assert_eq!(by_cost.table(1 << 23), None);
        for log in 4..=26 {
            let l = by_cost.windowed(1 << log);
            let least = WINDOW_WIDTHS.map(|c| Layout::windowed(c).cost(1 << log, 3)).min().unwrap();
            assert_eq!(l.cost(1 << log, 3), least, "2^{log}");
        }
    }

    #[test]
    fn tuning_overrides_and_bounds() {
        let tuned = Planner {
            windowed: WindowRule::LeastCost { per_bucket: 3 },
            table_per_bucket: 13,
            tuning: MsmTuning { window: Some(25), table_window: Some(17), tables: Some((10, 12)) },
        };
        assert_eq!(tuned.windowed(1 << 20).c, 20, "clamped to the widths");
        assert_eq!(tuned.table(1 << 10), Some(Layout::shared(17)));
        assert_eq!(tuned.table(1 << 12), None);
        let off = Planner { tuning: MsmTuning { tables: None, ..MsmTuning::default() }, ..tuned };
        assert_eq!(off.table(1 << 20), None);
    }
}
