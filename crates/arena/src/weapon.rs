//! Weapons: what each gun does (fire interval, damage and its falloff with
//! range, headshots, armor penetration, spread, magazine, price), the damage
//! a hit deals, deterministic spread, and a player's loadout with cooldown
//! and ammunition.
//!
//! Everything here is pure arithmetic on small `Copy` values: no allocation,
//! and the same inputs give the same outputs bit for bit.

use glam::Vec3;

use crate::world::hitbox::HitZone;

/// The guns of the arena.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum WeaponKind {
    /// The automatic rifle: fast, accurate standing still, expensive.
    Rifle,
    /// The sidearm every player starts with.
    #[default]
    Pistol,
}

impl WeaponKind {
    /// Every weapon.
    pub const ALL: [Self; 2] = [Self::Rifle, Self::Pistol];

    /// The tuning of this weapon.
    pub const fn spec(self) -> WeaponSpec {
        match self {
            Self::Rifle => WeaponSpec::RIFLE,
            Self::Pistol => WeaponSpec::PISTOL,
        }
    }

    /// A stable small number for the wire (0 rifle, 1 pistol).
    pub const fn code(self) -> u8 {
        match self {
            Self::Rifle => 0,
            Self::Pistol => 1,
        }
    }

    /// The weapon with wire code `code`.
    pub const fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Rifle),
            1 => Some(Self::Pistol),
            _ => None,
        }
    }
}

/// The tuning of one weapon. Distances in metres, times in seconds, angles
/// in radians.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeaponSpec {
    /// Which weapon this is.
    pub kind: WeaponKind,
    /// Shortest time between two shots.
    pub fire_interval_s: f32,
    /// Damage of a body (chest) hit at point-blank range, unarmored.
    pub base_damage: f32,
    /// Fraction of the damage kept per 10 m travelled (`0.9` loses 10 %
    /// every 10 m, compounding).
    pub falloff_per_10m: f32,
    /// Farthest a shot reaches.
    pub range: f32,
    /// Damage multiplier of a head hit (other zones use
    /// [`HitZone::damage_multiplier`]).
    pub headshot_multiplier: f32,
    /// Fraction of the damage that goes through armor to health (the rest
    /// is absorbed, wearing the armor down by half of it).
    pub armor_penetration: f32,
    /// Spread cone half-angle standing still.
    pub spread_standing: f32,
    /// Spread cone half-angle while moving.
    pub spread_moving: f32,
    /// Spread cone half-angle crouched and still.
    pub spread_crouching: f32,
    /// Rounds per magazine.
    pub magazine: u16,
    /// Spare rounds carried when bought.
    pub reserve: u16,
    /// Time to reload a magazine.
    pub reload_s: f32,
    /// Price in the buy phase.
    pub price: u32,
}

impl WeaponSpec {
    /// The rifle: 10 shots a second, 36 damage, a one-shot headshot on an
    /// unarmored player up to ~40 m.
    pub const RIFLE: Self = Self {
        kind: WeaponKind::Rifle,
        fire_interval_s: 0.1,
        base_damage: 36.0,
        falloff_per_10m: 0.97,
        range: 200.0,
        headshot_multiplier: 4.0,
        armor_penetration: 0.775,
        spread_standing: 0.004,
        spread_moving: 0.06,
        spread_crouching: 0.003,
        magazine: 30,
        reserve: 90,
        reload_s: 2.5,
        price: 2700,
    };

    /// The pistol: semi-automatic, weak against armor and at range.
    pub const PISTOL: Self = Self {
        kind: WeaponKind::Pistol,
        fire_interval_s: 0.15,
        base_damage: 30.0,
        falloff_per_10m: 0.85,
        range: 100.0,
        headshot_multiplier: 4.0,
        armor_penetration: 0.5,
        spread_standing: 0.008,
        spread_moving: 0.03,
        spread_crouching: 0.006,
        magazine: 12,
        reserve: 24,
        reload_s: 2.2,
        price: 200,
    };

    /// The spread cone half-angle for a stance: moving beats crouching.
    pub fn spread(&self, moving: bool, crouching: bool) -> f32 {
        if moving {
            self.spread_moving
        } else if crouching {
            self.spread_crouching
        } else {
            self.spread_standing
        }
    }

    /// Fire interval in ticks at `tick_rate_hz` (fractional).
    pub fn fire_interval_ticks(&self, tick_rate_hz: u32) -> f64 {
        f64::from(self.fire_interval_s) * f64::from(tick_rate_hz.max(1))
    }
}

/// What one hit takes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Damage {
    /// Health lost.
    pub health: u16,
    /// Armor lost.
    pub armor: u16,
}

/// The damage of a hit by `spec` at `distance` metres in `zone`. Armor
/// (vest and helmet) protects every zone but the legs: it lets
/// `armor_penetration` of the damage through to health and loses half of
/// the rest. A non-finite or negative distance counts as point blank.
pub fn damage(spec: &WeaponSpec, distance: f32, zone: HitZone, has_armor: bool) -> Damage {
    let distance = if distance.is_finite() {
        distance.max(0.0)
    } else {
        0.0
    };
    let zone_multiplier = match zone {
        HitZone::Head => spec.headshot_multiplier,
        other => other.damage_multiplier(),
    };
    let raw = spec.base_damage * spec.falloff_per_10m.powf(distance / 10.0) * zone_multiplier;
    if has_armor && zone != HitZone::Legs {
        let through = raw * spec.armor_penetration;
        let absorbed = raw - through;
        Damage {
            health: to_points(through),
            armor: to_points(absorbed * 0.5),
        }
    } else {
        Damage {
            health: to_points(raw),
            armor: 0,
        }
    }
}

/// Whole points, rounded down, saturating.
fn to_points(x: f32) -> u16 {
    if x.is_finite() {
        x.clamp(0.0, f32::from(u16::MAX)) as u16
    } else {
        0
    }
}

/// The direction a shot actually flies: `base_dir` (normalised here)
/// deflected by a random point of the spread cone for the stance, chosen
/// uniformly over the cone's disc from `seed` (e.g. a hash of tick, shooter
/// and shot number, so client and server agree). A zero `base_dir` gives
/// zero.
pub fn spread_direction(
    spec: &WeaponSpec,
    base_dir: Vec3,
    moving: bool,
    crouching: bool,
    seed: u32,
) -> Vec3 {
    let dir = base_dir.normalize_or_zero();
    if dir == Vec3::ZERO {
        return dir;
    }
    let half_angle = spec.spread(moving, crouching);
    let bits = mix64(u64::from(seed));
    let u = (bits >> 40) as f32 / (1u64 << 24) as f32; // [0, 1)
    let v = ((bits >> 16) & 0xff_ffff) as f32 / (1u64 << 24) as f32;
    let radius = half_angle.tan() * u.sqrt();
    let (s, c) = (v * std::f32::consts::TAU).sin_cos();
    let (side, up) = dir.any_orthonormal_pair();
    (dir + side * (radius * c) + up * (radius * s)).normalize()
}

/// SplitMix64's finaliser: a well-mixed 64-bit value from a seed.
fn mix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One carried gun: its ammunition, cooldown and reload.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WeaponState {
    spec: WeaponSpec,
    /// Rounds in the magazine.
    pub ammo: u16,
    /// Spare rounds.
    pub reserve: u16,
    /// Earliest time (seconds) the next shot may leave.
    ready_at_s: f64,
    /// When a reload in progress completes (seconds), if any.
    reload_done_s: Option<f64>,
}

impl WeaponState {
    /// A freshly bought `kind`: full magazine and reserve, ready to fire.
    pub fn new(kind: WeaponKind) -> Self {
        let spec = kind.spec();
        Self {
            spec,
            ammo: spec.magazine,
            reserve: spec.reserve,
            ready_at_s: f64::NEG_INFINITY,
            reload_done_s: None,
        }
    }

    /// The weapon's tuning.
    pub fn spec(&self) -> &WeaponSpec {
        &self.spec
    }

    /// Which weapon.
    pub fn kind(&self) -> WeaponKind {
        self.spec.kind
    }

    /// Fires at `tick` if the weapon is ready (cooled down, not reloading)
    /// and loaded: spends a round, starts the cooldown and returns `true`.
    /// An empty magazine starts a reload (when there are spare rounds).
    pub fn try_fire(&mut self, tick: u32, tick_rate_hz: u32) -> bool {
        let now = seconds(tick, tick_rate_hz);
        self.finish_reload(now);
        if self.reload_done_s.is_some() || now + TIME_EPSILON < self.ready_at_s {
            return false;
        }
        if self.ammo == 0 {
            self.start_reload_at(now);
            return false;
        }
        self.ammo -= 1;
        // A held trigger (fired within a tick of being ready) accumulates
        // from the earliest allowed time, not `now`, so the weapon keeps its
        // rate whatever the tick rate.
        let held = now - self.ready_at_s < 1.0 / f64::from(tick_rate_hz.max(1));
        let base = if held { self.ready_at_s } else { now };
        self.ready_at_s = base + f64::from(self.spec.fire_interval_s);
        true
    }

    /// Starts a reload at `tick` (nothing happens with a full magazine, no
    /// spare rounds, or a reload already under way).
    pub fn start_reload(&mut self, tick: u32, tick_rate_hz: u32) {
        let now = seconds(tick, tick_rate_hz);
        self.finish_reload(now);
        self.start_reload_at(now);
    }

    /// Whether a reload is under way at `tick`.
    pub fn is_reloading(&mut self, tick: u32, tick_rate_hz: u32) -> bool {
        self.finish_reload(seconds(tick, tick_rate_hz));
        self.reload_done_s.is_some()
    }

    fn start_reload_at(&mut self, now: f64) {
        if self.reload_done_s.is_none() && self.ammo < self.spec.magazine && self.reserve > 0 {
            self.reload_done_s = Some(now + f64::from(self.spec.reload_s));
        }
    }

    fn finish_reload(&mut self, now: f64) {
        if let Some(done) = self.reload_done_s
            && now + TIME_EPSILON >= done
        {
            let moved = (self.spec.magazine - self.ammo).min(self.reserve);
            self.ammo += moved;
            self.reserve -= moved;
            self.reload_done_s = None;
        }
    }
}

/// Slack on time comparisons, so a shot due exactly on a tick is not
/// pushed to the next one by rounding.
const TIME_EPSILON: f64 = 1e-9;

fn seconds(tick: u32, tick_rate_hz: u32) -> f64 {
    f64::from(tick) / f64::from(tick_rate_hz.max(1))
}

/// Which of a loadout's guns is in hand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Slot {
    /// The bought primary (a rifle).
    Primary,
    /// The sidearm.
    #[default]
    Secondary,
}

/// The guns one player carries: an optional primary, a sidearm, and which
/// is in hand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Loadout {
    /// The primary gun, if bought.
    pub primary: Option<WeaponState>,
    /// The sidearm.
    pub secondary: WeaponState,
    /// The gun in hand.
    pub active: Slot,
}

impl Default for Loadout {
    fn default() -> Self {
        Self::starting()
    }
}

impl Loadout {
    /// What every player starts a match with: a pistol.
    pub fn starting() -> Self {
        Self {
            primary: None,
            secondary: WeaponState::new(WeaponKind::Pistol),
            active: Slot::Secondary,
        }
    }

    /// Gives `kind` (fresh) in its slot and takes it in hand.
    pub fn give(&mut self, kind: WeaponKind) {
        match kind {
            WeaponKind::Rifle => {
                self.primary = Some(WeaponState::new(kind));
                self.active = Slot::Primary;
            }
            WeaponKind::Pistol => {
                self.secondary = WeaponState::new(kind);
                self.active = Slot::Secondary;
            }
        }
    }

    /// Takes `slot` in hand (`false` when the slot is empty).
    pub fn select(&mut self, slot: Slot) -> bool {
        if slot == Slot::Primary && self.primary.is_none() {
            return false;
        }
        self.active = slot;
        true
    }

    /// The gun in hand.
    pub fn active(&self) -> &WeaponState {
        match (self.active, &self.primary) {
            (Slot::Primary, Some(w)) => w,
            _ => &self.secondary,
        }
    }

    /// The gun in hand, mutably.
    pub fn active_mut(&mut self) -> &mut WeaponState {
        match (self.active, &mut self.primary) {
            (Slot::Primary, Some(w)) => w,
            _ => &mut self.secondary,
        }
    }

    /// Fires the gun in hand (see [`WeaponState::try_fire`]).
    pub fn try_fire(&mut self, tick: u32, tick_rate_hz: u32) -> bool {
        self.active_mut().try_fire(tick, tick_rate_hz)
    }

    /// Drops everything but a fresh pistol (after a death).
    pub fn reset(&mut self) {
        *self = Self::starting();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn damage_falls_off_with_range_and_headshots_multiply() {
        let r = WeaponSpec::RIFLE;
        let near = damage(&r, 0.0, HitZone::Chest, false);
        assert_eq!(
            near,
            Damage {
                health: 36,
                armor: 0
            }
        );
        let far = damage(&r, 50.0, HitZone::Chest, false);
        assert!(far.health < near.health, "{far:?}");
        assert_eq!(damage(&r, 0.0, HitZone::Head, false).health, 144);
        assert_eq!(damage(&r, 0.0, HitZone::Legs, false).health, 27);
        // The pistol loses more with range than the rifle.
        let p = WeaponSpec::PISTOL;
        let kept = |s: &WeaponSpec| {
            f32::from(damage(s, 40.0, HitZone::Chest, false).health) / s.base_damage
        };
        assert!(kept(&p) < kept(&r));
        // Garbage distances are point blank, never a panic.
        assert_eq!(damage(&r, f32::NAN, HitZone::Chest, false), near);
    }

    #[test]
    fn armor_absorbs_except_on_the_legs() {
        let r = WeaponSpec::RIFLE;
        let armored = damage(&r, 0.0, HitZone::Chest, true);
        assert_eq!(armored.health, 27); // 36 * 0.775 = 27.9
        assert_eq!(armored.armor, 4); // (36 - 27.9) / 2 = 4.05
        assert_eq!(damage(&r, 0.0, HitZone::Legs, true).armor, 0);
        // The pistol penetrates armor worse.
        let p = damage(&WeaponSpec::PISTOL, 0.0, HitZone::Chest, true);
        assert_eq!(p.health, 15);
    }

    #[test]
    fn spread_is_deterministic_and_within_the_cone() {
        let r = WeaponSpec::RIFLE;
        let base = Vec3::new(1.0, 0.2, -0.5);
        let unit = base.normalize();
        let mut max_standing = 0.0f32;
        let mut max_moving = 0.0f32;
        for seed in 0..2000 {
            let d = spread_direction(&r, base, false, false, seed);
            assert_eq!(d, spread_direction(&r, base, false, false, seed));
            assert!((d.length() - 1.0).abs() < 1e-5);
            let a = d.dot(unit).clamp(-1.0, 1.0).acos();
            assert!(a <= r.spread_standing + 1e-4, "{a}");
            max_standing = max_standing.max(a);
            let m = spread_direction(&r, base, true, false, seed);
            max_moving = max_moving.max(m.dot(unit).clamp(-1.0, 1.0).acos());
        }
        // The cone is filled, and moving spreads far wider.
        assert!(max_standing > r.spread_standing * 0.9);
        assert!(max_moving > r.spread_standing * 5.0);
        assert!(max_moving <= r.spread_moving + 1e-4);
        assert_eq!(
            spread_direction(&r, Vec3::ZERO, false, false, 1),
            Vec3::ZERO
        );
        assert!(r.spread(false, true) < r.spread(false, false));
    }

    #[test]
    fn rifle_fires_at_its_rate_and_reloads() {
        let mut w = WeaponState::new(WeaponKind::Rifle);
        let rate = 128;
        // Hold the trigger for 1 s: 10 shots (one every 12.8 ticks).
        let shots = (0..128).filter(|&t| w.try_fire(t + 1, rate)).count();
        assert_eq!(shots, 10);
        assert_eq!(w.ammo, 20);
        // Empty the magazine, then the next pull starts a reload.
        let mut tick = 1000;
        while w.ammo > 0 {
            w.try_fire(tick, rate);
            tick += 1;
        }
        tick += 20; // past the cooldown
        assert!(!w.try_fire(tick, rate), "empty");
        assert!(w.is_reloading(tick, rate));
        assert!(!w.try_fire(tick + 100, rate), "2.5 s reload not done");
        assert!(w.try_fire(tick + 400, rate));
        assert_eq!((w.ammo, w.reserve), (29, 60));
        // Same at 30 Hz: the rate holds.
        let mut w = WeaponState::new(WeaponKind::Rifle);
        assert_eq!((0..30).filter(|&t| w.try_fire(t + 1, 30)).count(), 10);
    }

    #[test]
    fn loadout_switches_and_fires_the_gun_in_hand() {
        let mut l = Loadout::starting();
        assert_eq!(l.active().kind(), WeaponKind::Pistol);
        assert!(!l.select(Slot::Primary));
        l.give(WeaponKind::Rifle);
        assert_eq!(l.active().kind(), WeaponKind::Rifle);
        assert!(l.try_fire(1, 128));
        assert_eq!(l.active().ammo, 29);
        assert!(l.select(Slot::Secondary));
        assert!(l.try_fire(2, 128), "the pistol has its own cooldown");
        l.reset();
        assert!(l.primary.is_none());
        for k in WeaponKind::ALL {
            assert_eq!(WeaponKind::from_code(k.code()), Some(k));
        }
        assert_eq!(WeaponKind::from_code(9), None);
    }
}
