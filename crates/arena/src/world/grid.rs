//! A uniform grid over the ground plane that finds the boxes near a point, an
//! area or a ray without scanning every box of the map.
//!
//! Built once when a map loads; queries never allocate. Each cell lists the
//! boxes whose footprint touches it (in map order, so every query visits boxes
//! in a deterministic order) and the highest box top in it, which lets a ray
//! that passes above everything in a cell skip the cell.

use std::ops::ControlFlow;

use glam::{Vec2, Vec3};

use crate::world::aabb::Aabb;

/// Default edge length of a grid cell, in metres.
pub const DEFAULT_CELL_SIZE: f32 = 4.0;

/// A cell span on the grid, inclusive: `lo..=hi` on x and z.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct CellSpan {
    lo: [u32; 2],
    hi: [u32; 2],
}

/// The spatial index over a map's boxes.
#[derive(Debug, Clone)]
pub struct BoxGrid {
    origin: Vec2,
    cell_size: f32,
    inv_cell: f32,
    cells: [u32; 2],
    /// `cell_start[c]..cell_start[c + 1]` indexes `entries` for cell `c`.
    cell_start: Vec<u32>,
    entries: Vec<u32>,
    /// Highest box top per cell (negative infinity in an empty cell).
    cell_top: Vec<f32>,
    box_span: Vec<CellSpan>,
}

impl BoxGrid {
    /// Indexes `boxes` over the footprint `lo..hi` with square cells of `cell_size`.
    pub fn build(lo: Vec2, hi: Vec2, cell_size: f32, boxes: &[Aabb]) -> Self {
        let cell_size = if cell_size.is_finite() && cell_size > 0.0 {
            cell_size
        } else {
            DEFAULT_CELL_SIZE
        };
        let extent = (hi - lo).max(Vec2::splat(cell_size));
        let cells = [
            ((extent.x / cell_size).ceil() as u32).clamp(1, 4096),
            ((extent.y / cell_size).ceil() as u32).clamp(1, 4096),
        ];
        let mut grid = Self {
            origin: lo,
            cell_size,
            inv_cell: cell_size.recip(),
            cells,
            cell_start: Vec::new(),
            entries: Vec::new(),
            cell_top: vec![f32::NEG_INFINITY; (cells[0] * cells[1]) as usize],
            box_span: Vec::with_capacity(boxes.len()),
        };
        let mut counts = vec![0u32; grid.cell_top.len()];
        for b in boxes {
            let (min, max) = b.footprint();
            let span = CellSpan {
                lo: grid.cell_of(min),
                hi: grid.cell_of(max),
            };
            grid.box_span.push(span);
            for c in Self::span_cells(span, cells[0]) {
                counts[c] += 1;
                grid.cell_top[c] = grid.cell_top[c].max(b.max.y);
            }
        }
        let mut start = Vec::with_capacity(counts.len() + 1);
        let mut total = 0u32;
        for &n in &counts {
            start.push(total);
            total += n;
        }
        start.push(total);
        let mut fill = start.clone();
        let mut entries = vec![0u32; total as usize];
        for (i, &span) in grid.box_span.iter().enumerate() {
            for c in Self::span_cells(span, cells[0]) {
                entries[fill[c] as usize] = i as u32;
                fill[c] += 1;
            }
        }
        grid.cell_start = start;
        grid.entries = entries;
        grid
    }

    /// The edge length of a cell.
    pub fn cell_size(&self) -> f32 {
        self.cell_size
    }

    /// Cells along x and z.
    pub fn dimensions(&self) -> [u32; 2] {
        self.cells
    }

    /// Indices of the cells of `span` on a grid `width` cells wide.
    fn span_cells(span: CellSpan, width: u32) -> impl Iterator<Item = usize> {
        (span.lo[1]..=span.hi[1])
            .flat_map(move |z| (span.lo[0]..=span.hi[0]).map(move |x| (z * width + x) as usize))
    }

    fn cell_index(&self, x: u32, z: u32) -> usize {
        (z * self.cells[0] + x) as usize
    }

    /// The cell holding ground point `p`, clamped to the grid.
    fn cell_of(&self, p: Vec2) -> [u32; 2] {
        let rel = (p - self.origin) * self.inv_cell;
        [
            clamp_cell(rel.x, self.cells[0]),
            clamp_cell(rel.y, self.cells[1]),
        ]
    }

    fn cell_entries(&self, c: usize) -> &[u32] {
        &self.entries[self.cell_start[c] as usize..self.cell_start[c + 1] as usize]
    }

    /// Calls `f` once for every box whose footprint touches the ground
    /// rectangle `lo..hi`, in a deterministic order, stopping early on `Break`.
    pub fn for_each_in_area<B>(
        &self,
        lo: Vec2,
        hi: Vec2,
        mut f: impl FnMut(usize) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let q = CellSpan {
            lo: self.cell_of(lo),
            hi: self.cell_of(hi),
        };
        for z in q.lo[1]..=q.hi[1] {
            for x in q.lo[0]..=q.hi[0] {
                for &i in self.cell_entries(self.cell_index(x, z)) {
                    // A box spanning several cells is reported only from the
                    // first cell it shares with the query: no duplicates and
                    // no scratch memory.
                    let s = self.box_span[i as usize];
                    if x == s.lo[0].max(q.lo[0]) && z == s.lo[1].max(q.lo[1]) {
                        f(i as usize)?;
                    }
                }
            }
        }
        ControlFlow::Continue(())
    }

    /// Walks the cells the ray `origin + dir * t`, `t` in `[0, max_t]`, passes
    /// over, in order of distance (a 2D DDA on the ground plane). For each cell
    /// the ray does not pass entirely above, calls `f(boxes, t_enter, t_exit)`
    /// with the boxes listed in that cell; `Break` stops the walk. A box
    /// spanning several cells may be offered more than once.
    pub fn walk_ray<B>(
        &self,
        origin: Vec3,
        dir: Vec3,
        max_t: f32,
        mut f: impl FnMut(&[u32], f32, f32) -> ControlFlow<B>,
    ) -> ControlFlow<B> {
        let o = Vec2::new(origin.x, origin.z);
        let d = Vec2::new(dir.x, dir.z);
        let lo = self.origin;
        let hi =
            self.origin + Vec2::new(self.cells[0] as f32, self.cells[1] as f32) * self.cell_size;
        // Clip to the grid's footprint.
        let (mut t0, mut t1) = (0.0f32, max_t);
        for axis in 0..2 {
            if d[axis] == 0.0 {
                if o[axis] < lo[axis] || o[axis] > hi[axis] {
                    return ControlFlow::Continue(());
                }
            } else {
                let inv = d[axis].recip();
                let a = (lo[axis] - o[axis]) * inv;
                let b = (hi[axis] - o[axis]) * inv;
                t0 = t0.max(a.min(b));
                t1 = t1.min(a.max(b));
            }
        }
        if t0.is_nan() || t1.is_nan() || t0 > t1 {
            return ControlFlow::Continue(());
        }
        let start = o + d * t0;
        let [mut cx, mut cz] = self.cell_of(start);
        let mut step = [0i64; 2];
        let mut t_next = [f32::INFINITY; 2];
        let mut t_delta = [f32::INFINITY; 2];
        let cell = [cx, cz];
        for axis in 0..2 {
            if d[axis] > 0.0 {
                step[axis] = 1;
                let boundary = lo[axis] + (cell[axis] + 1) as f32 * self.cell_size;
                t_next[axis] = (boundary - o[axis]) / d[axis];
                t_delta[axis] = self.cell_size / d[axis];
            } else if d[axis] < 0.0 {
                step[axis] = -1;
                let boundary = lo[axis] + cell[axis] as f32 * self.cell_size;
                t_next[axis] = (boundary - o[axis]) / d[axis];
                t_delta[axis] = -self.cell_size / d[axis];
            }
        }
        let mut t_enter = t0;
        loop {
            let t_exit = t_next[0].min(t_next[1]).min(t1);
            let c = self.cell_index(cx, cz);
            // The ray's lowest height over this cell; skip cells it clears.
            let y_low = (origin.y + dir.y * t_enter).min(origin.y + dir.y * t_exit);
            if y_low < self.cell_top[c] {
                f(self.cell_entries(c), t_enter, t_exit)?;
            }
            if t_exit >= t1 {
                return ControlFlow::Continue(());
            }
            let axis = usize::from(t_next[1] < t_next[0]);
            let next = if axis == 0 { &mut cx } else { &mut cz };
            let moved = i64::from(*next) + step[axis];
            if moved < 0 || moved >= i64::from(self.cells[axis]) {
                return ControlFlow::Continue(());
            }
            *next = moved as u32;
            t_enter = t_next[axis];
            t_next[axis] += t_delta[axis];
        }
    }
}

fn clamp_cell(rel: f32, cells: u32) -> u32 {
    if rel.is_nan() || rel <= 0.0 {
        0
    } else {
        (rel as u32).min(cells - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes() -> Vec<Aabb> {
        vec![
            Aabb::new(Vec3::new(1.0, 0.0, 1.0), Vec3::new(2.0, 3.0, 2.0)),
            // Spans many cells.
            Aabb::new(Vec3::new(0.0, 0.0, 10.0), Vec3::new(40.0, 1.0, 11.0)),
            Aabb::new(Vec3::new(30.0, 0.0, 30.0), Vec3::new(31.0, 2.0, 31.0)),
        ]
    }

    fn grid() -> BoxGrid {
        BoxGrid::build(Vec2::ZERO, Vec2::splat(40.0), 4.0, &boxes())
    }

    fn area(g: &BoxGrid, lo: Vec2, hi: Vec2) -> Vec<usize> {
        let mut out = Vec::new();
        let _ = g.for_each_in_area::<()>(lo, hi, |i| {
            out.push(i);
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn area_query_reports_each_touching_box_once() {
        let g = grid();
        assert_eq!(g.dimensions(), [10, 10]);
        assert_eq!(area(&g, Vec2::ZERO, Vec2::splat(40.0)), vec![0, 1, 2]);
        assert_eq!(
            area(&g, Vec2::new(5.0, 9.0), Vec2::new(25.0, 12.0)),
            vec![1]
        );
        assert!(area(&g, Vec2::new(20.0, 20.0), Vec2::new(25.0, 25.0)).is_empty());
    }

    #[test]
    fn ray_walk_visits_cells_in_order_and_finds_the_boxes_on_its_path() {
        let g = grid();
        let mut seen = Vec::new();
        let mut last_t = -1.0;
        let dir = Vec3::new(1.0, 0.0, 1.0).normalize();
        let _ = g.walk_ray::<()>(Vec3::new(0.5, 0.5, 0.5), dir, 60.0, |boxes, t0, t1| {
            assert!(t0 >= last_t && t1 >= t0);
            last_t = t0;
            seen.extend_from_slice(boxes);
            ControlFlow::Continue(())
        });
        assert!(seen.contains(&0) && seen.contains(&1) && seen.contains(&2));
    }

    #[test]
    fn ray_above_every_box_skips_all_cells() {
        let g = grid();
        let mut visits = 0;
        let _ = g.walk_ray::<()>(Vec3::new(0.5, 5.0, 0.5), Vec3::X, 39.0, |_, _, _| {
            visits += 1;
            ControlFlow::Continue(())
        });
        assert_eq!(visits, 0);
    }

    #[test]
    fn vertical_and_outside_rays_terminate() {
        let g = grid();
        let mut visits = 0;
        let _ = g.walk_ray::<()>(Vec3::new(1.5, 10.0, 1.5), Vec3::NEG_Y, 20.0, |b, _, _| {
            visits += 1;
            assert_eq!(b, &[0]);
            ControlFlow::Continue(())
        });
        assert_eq!(visits, 1);
        let _ = g.walk_ray::<()>(Vec3::new(-5.0, 0.5, -5.0), Vec3::NEG_X, 20.0, |_, _, _| {
            panic!("a ray leaving the grid visits nothing")
        });
    }
}
