//! Shots: lag-compensated resolution against rewound targets, damage,
//! armor, kills.

use super::*;

impl Arena {
    pub(super) fn resolve_shots(&mut self, ctx: &mut TickContext<'_, Self>) {
        let now = ctx.tick();
        for s in 0..self.shots.len() {
            let Some(pending) = self.shots[s].take() else {
                continue;
            };
            let shooter = PlayerId(s as u16);
            let Some(f) = self.fighters[s] else { continue };
            if !f.alive {
                continue;
            }
            self.shots_fired += 1;
            let pose = f.pose();
            let spec = *f.loadout.active().spec();
            let seed = (self.seed as u32)
                ^ now.wrapping_mul(0x9E37_79B9)
                ^ u32::from(shooter.0).wrapping_mul(0x85EB_CA6B)
                ^ f.shots.wrapping_mul(0xC2B2_AE35);
            let dir = spread_direction(
                &spec,
                pose.view_dir(),
                pose.speed > 0.5,
                pose.crouch >= 0.5,
                seed,
            );
            let shot = Shot {
                shooter,
                origin: pose.eye(&self.stage.params),
                dir,
                range: spec.range,
                aim_time: TickTime::new(pending.aim_tick.min(now), 0.0),
            };
            let fighters = &self.fighters;
            let candidates = fighters.iter().enumerate().filter_map(|(i, t)| {
                t.as_ref()
                    .filter(|t| t.alive && t.team != f.team)
                    .map(|t| (PlayerId(i as u16), t.pose()))
            });
            if let Some(hit) =
                self.resolver
                    .resolve(&self.stage.map, &self.history, &shot, now, candidates)
            {
                self.hits += 1;
                self.apply_hit(ctx, shooter, hit.target, hit.zone, hit.distance);
            }
        }
    }

    pub(super) fn apply_hit(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        shooter: PlayerId,
        target: PlayerId,
        zone: crate::HitZone,
        distance: f32,
    ) {
        let (Some(sf), Some(tf)) = (
            self.fighters[usize::from(shooter.0)],
            self.fighters[usize::from(target.0)],
        ) else {
            return;
        };
        let weapon = arms::weapon_id(&sf);
        let dealt = damage(sf.loadout.active().spec(), distance, zone, tf.armor > 0);
        let headshot = zone == crate::HitZone::Head;
        let health = u16::from(tf.health).saturating_sub(dealt.health) as u8;
        let armor = u16::from(tf.armor).saturating_sub(dealt.armor) as u8;
        let dead = health == 0;
        if let Some(t) = self.fighters[usize::from(target.0)].as_mut() {
            t.health = health;
            t.armor = armor;
            if dead {
                t.alive = false;
                t.deaths += 1;
                t.movement.velocity = Vec3::ZERO;
            }
        }
        ctx.broadcast_event(ArenaEvent::ShotHit {
            shooter: sf.body,
            target: tf.body,
            damage: dealt.health.min(crate::event::MAX_DAMAGE),
            headshot,
        });
        if dead {
            let max = self.config.max_money;
            let reward = self.config.kill_reward;
            if let Some(s) = self.fighters[usize::from(shooter.0)].as_mut() {
                s.kills += 1;
                s.money = (s.money + reward).min(max);
            }
            self.history.clear(target);
            ctx.broadcast_event(ArenaEvent::Kill {
                killer: sf.body,
                victim: tf.body,
                weapon,
                headshot,
            });
            self.publish(ctx.world, shooter);
        }
        self.publish(ctx.world, target);
    }
}
