//! Round rules: spawning, buy -> combat -> round end, first to N rounds,
//! the economy and purchases.

use super::*;

impl Arena {
    pub(super) fn start_round(&mut self, ctx: &mut TickContext<'_, Self>) {
        let now = ctx.tick();
        self.clock.round += 1;
        // Everyone moved to a spawn: every viewer's fog is recomputed now.
        self.fog.invalidate();
        self.clock.enter(Phase::Buy, now, self.config.buy_ticks);
        self.history.set_recording(false);
        for i in 0..self.fighters.len() {
            let p = PlayerId(i as u16);
            self.history.clear(p);
            self.spawn(p, self.clock.round);
            self.publish(ctx.world, p);
        }
        ctx.broadcast_event(ArenaEvent::RoundStart {
            round: self.clock.round.min(crate::event::MAX_ROUND),
            phase: RoundPhase::Buy,
            phase_end_tick: self.clock.phase_end,
        });
    }

    pub(super) fn end_round(
        &mut self,
        ctx: &mut TickContext<'_, Self>,
        winner: Team,
        reason: RoundEndReason,
    ) {
        let won_match = self.clock.award(winner, self.config.rounds_to_win);
        let max = self.config.max_money;
        let (win, loss) = (self.config.win_reward, self.config.loss_reward);
        for i in 0..self.fighters.len() {
            if let Some(f) = self.fighters[i].as_mut() {
                let reward = if f.team == winner { win } else { loss };
                f.money = (f.money + reward).min(max);
            }
            self.publish(ctx.world, PlayerId(i as u16));
        }
        let cap = crate::event::MAX_ROUND;
        ctx.broadcast_event(ArenaEvent::RoundEnd {
            round: self.clock.round.min(cap),
            winner,
            reason,
            score: [self.clock.score[0].min(cap), self.clock.score[1].min(cap)],
        });
        self.history.set_recording(false);
        if won_match {
            ctx.broadcast_event(ArenaEvent::MatchEnd {
                score: [self.clock.score[0].min(cap), self.clock.score[1].min(cap)],
                winner: Some(winner),
            });
            self.clock.enter(Phase::MatchOver, ctx.tick(), u32::MAX);
        } else {
            self.clock
                .enter(Phase::RoundEnd, ctx.tick(), self.config.round_end_ticks);
        }
    }

    pub(super) fn buy(&mut self, ctx: &mut TickContext<'_, Self>, player: PlayerId, slot: u8) {
        let Some(item) = Item::from_slot(slot) else {
            return;
        };
        let cost = arms::price(item);
        let Some(f) = self.fighters[usize::from(player.0)].as_mut() else {
            return;
        };
        let owned = match item {
            Item::Pistol => false,
            Item::Rifle => f.loadout.primary.is_some(),
            Item::Armor => f.armor >= ARMOR_POINTS,
        };
        if owned || f.money < cost {
            return;
        }
        f.money -= cost;
        match arms::weapon(item) {
            Some(kind) => f.loadout.give(kind),
            None => f.armor = ARMOR_POINTS,
        }
        let (team, wallet, balance) = (f.team, f.wallet, f.money);
        self.publish(ctx.world, player);
        let event = ArenaEvent::Purchase {
            player: wallet,
            item: item.slot(),
            cost,
            balance,
        };
        let fighters = &self.fighters;
        ctx.send_event_where(event, |p| {
            fighters
                .get(usize::from(p.0))
                .and_then(|f| f.as_ref())
                .is_some_and(|f| f.team == team)
        });
    }

    pub(super) fn round_rules(&mut self, ctx: &mut TickContext<'_, Self>) {
        let now = ctx.tick();
        match self.clock.phase {
            Phase::Waiting => self.start_round(ctx),
            Phase::Buy if self.clock.expired(now) => {
                self.clock
                    .enter(Phase::Combat, now, self.config.combat_ticks);
                self.history.set_recording(true);
                ctx.broadcast_event(ArenaEvent::RoundStart {
                    round: self.clock.round.min(crate::event::MAX_ROUND),
                    phase: RoundPhase::Live,
                    phase_end_tick: self.clock.phase_end,
                });
            }
            Phase::Combat => {
                let mut members = [0usize; 2];
                let mut living = [0usize; 2];
                for (_, f) in self.fighters() {
                    members[f.team.index()] += 1;
                    living[f.team.index()] += usize::from(f.alive);
                }
                let contested = members[0] > 0 && members[1] > 0;
                if contested && living[0] == 0 {
                    self.end_round(ctx, Team::Defenders, RoundEndReason::Elimination);
                } else if contested && living[1] == 0 {
                    self.end_round(ctx, Team::Attackers, RoundEndReason::Elimination);
                } else if self.clock.expired(now) {
                    self.end_round(ctx, Team::Defenders, RoundEndReason::TimeExpired);
                }
            }
            Phase::RoundEnd if self.clock.expired(now) => self.start_round(ctx),
            _ => {}
        }
    }
}
