//! [`Interpolation`]: per entity, the positions of the last few snapshots by
//! server tick, and a position at any fractional render tick between them.

use hightick_engine::EntityId;
use hightick_engine::tick::Tick;

/// Samples kept per entity: a quarter of a second at 128 Hz, so that a
/// burst of late snapshots arriving together (jitter on a bad link) still
/// leaves the ticks a client draws, two or more behind the newest, held.
pub const SAMPLES: usize = 32;

#[derive(Debug, Clone, Copy, Default)]
struct Track {
    ticks: [Tick; SAMPLES],
    positions: [[f32; 3]; SAMPLES],
    /// Samples held, up to `SAMPLES`.
    len: usize,
    /// Index of the newest sample.
    head: usize,
}

impl Track {
    fn push(&mut self, tick: Tick, position: [f32; 3]) {
        if self.len > 0 && tick <= self.ticks[self.head] {
            return; // only newer ticks go in
        }
        self.head = (self.head + 1) % SAMPLES;
        self.ticks[self.head] = tick;
        self.positions[self.head] = position;
        self.len = (self.len + 1).min(SAMPLES);
    }

    /// Sample `age` steps back from the newest.
    fn back(&self, age: usize) -> (Tick, [f32; 3]) {
        let i = (self.head + SAMPLES - age) % SAMPLES;
        (self.ticks[i], self.positions[i])
    }

    fn at(&self, render_tick: f32) -> Option<[f32; 3]> {
        if self.len == 0 {
            return None;
        }
        let (newest_tick, newest) = self.back(0);
        if render_tick >= newest_tick as f32 {
            return Some(newest);
        }
        for age in 1..self.len {
            let (t0, p0) = self.back(age);
            if render_tick >= t0 as f32 {
                let (t1, p1) = self.back(age - 1);
                let f = (render_tick - t0 as f32) / (t1 - t0) as f32;
                return Some([
                    p0[0] + (p1[0] - p0[0]) * f,
                    p0[1] + (p1[1] - p0[1]) * f,
                    p0[2] + (p1[2] - p0[2]) * f,
                ]);
            }
        }
        Some(self.back(self.len - 1).1)
    }
}

/// The interpolation buffer of every entity slot, allocated once.
#[derive(Debug, Clone)]
pub struct Interpolation {
    tracks: Box<[Track]>,
}

impl Interpolation {
    /// A buffer for entity ids `0..entities`.
    pub fn new(entities: usize) -> Self {
        Self {
            tracks: vec![Track::default(); entities].into_boxed_slice(),
        }
    }

    /// Records `entity`'s position at server tick `tick`; ticks not newer
    /// than its newest sample are ignored.
    pub fn record(&mut self, entity: EntityId, tick: Tick, position: [f32; 3]) {
        if let Some(t) = self.tracks.get_mut(usize::from(entity.0)) {
            t.push(tick, position);
        }
    }

    /// Forgets `entity` (it left, or the world was resynced).
    pub fn forget(&mut self, entity: EntityId) {
        if let Some(t) = self.tracks.get_mut(usize::from(entity.0)) {
            t.len = 0;
        }
    }

    /// Forgets every entity.
    pub fn clear(&mut self) {
        for t in self.tracks.iter_mut() {
            t.len = 0;
        }
    }

    /// `entity`'s position at `render_tick`: linear between the two samples
    /// around it, the newest after the newest, the oldest before the oldest.
    pub fn at(&self, entity: EntityId, render_tick: f32) -> Option<[f32; 3]> {
        self.tracks.get(usize::from(entity.0))?.at(render_tick)
    }

    /// `entity`'s recorded position at exactly server tick `tick`, if that
    /// tick's sample is still held.
    pub fn sample(&self, entity: EntityId, tick: Tick) -> Option<[f32; 3]> {
        let t = self.tracks.get(usize::from(entity.0))?;
        (0..t.len)
            .map(|age| t.back(age))
            .find_map(|(at, p)| (at == tick).then_some(p))
    }

    /// The newest server tick held for `entity`.
    pub fn newest_tick(&self, entity: EntityId) -> Option<Tick> {
        let t = self.tracks.get(usize::from(entity.0))?;
        (t.len > 0).then(|| t.back(0).0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interpolates_between_the_samples_around_the_render_tick() {
        let mut b = Interpolation::new(4);
        let e = EntityId(2);
        assert_eq!(b.at(e, 10.0), None);
        b.record(e, 10, [0.0, 0.0, 0.0]);
        b.record(e, 12, [2.0, 4.0, -2.0]);
        b.record(e, 14, [4.0, 4.0, -2.0]);
        assert_eq!(b.at(e, 11.0), Some([1.0, 2.0, -1.0]));
        assert_eq!(b.at(e, 13.5), Some([3.5, 4.0, -2.0]));
        // Past the newest: the newest; before the oldest: the oldest.
        assert_eq!(b.at(e, 20.0), Some([4.0, 4.0, -2.0]));
        assert_eq!(b.at(e, 3.0), Some([0.0, 0.0, 0.0]));
        assert_eq!(b.newest_tick(e), Some(14));
        assert_eq!(b.sample(e, 12), Some([2.0, 4.0, -2.0]));
        assert_eq!(b.sample(e, 13), None);
    }

    #[test]
    fn old_and_repeated_ticks_are_ignored_and_the_ring_keeps_the_newest() {
        let mut b = Interpolation::new(1);
        let e = EntityId(0);
        let n = SAMPLES as u32 + 12;
        for t in 0..n {
            b.record(e, t, [t as f32, 0.0, 0.0]);
        }
        b.record(e, 5, [-1.0, 0.0, 0.0]);
        b.record(e, n - 1, [-1.0, 0.0, 0.0]);
        assert_eq!(b.at(e, (n - 1) as f32), Some([(n - 1) as f32, 0.0, 0.0]));
        // Only the last SAMPLES ticks are held.
        let oldest = n - SAMPLES as u32;
        assert_eq!(b.at(e, 0.0), Some([oldest as f32, 0.0, 0.0]));
        b.forget(e);
        assert_eq!(b.at(e, (n - 1) as f32), None);
        // Out-of-range entities are ignored.
        b.record(EntityId(9), 1, [0.0; 3]);
        assert_eq!(b.at(EntityId(9), 1.0), None);
    }
}
