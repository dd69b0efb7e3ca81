//! The prediction calls of the C ABI (`hightick_prediction_*`), emitted by
//! [`export!`](crate::export) with `predict` for games that predict.

use std::ffi::{CStr, c_char};

use hightick_engine::EntityId;

use super::{Session, Sessions, guarded, read_out};
use crate::error::FfiError;
use crate::game::FfiGame;
use crate::prediction::{FfiPredict, LocalPlayer, local_player};
use crate::records::{HightickPrediction, HightickPredictionStats};
use crate::registry::HightickClient;
use crate::status::HightickStatus;

/// The session's predictor, or the error for a handle that does not predict.
fn predictor<F: FfiGame>(
    s: &Session<F>,
    client: HightickClient,
) -> Result<&dyn LocalPlayer<F::Game>, FfiError> {
    s.prediction
        .as_deref()
        .ok_or(FfiError::NotPredicting(client))
}

/// `hightick_prediction_start`.
///
/// # Safety
/// `stage` is null or a NUL-terminated string.
pub unsafe fn prediction_start<F: FfiPredict>(
    sessions: &Sessions<F>,
    client: HightickClient,
    stage: *const c_char,
) -> HightickStatus {
    guarded(|| {
        let name = if stage.is_null() {
            None
        } else {
            // SAFETY: non-null and NUL-terminated per the contract.
            let text = unsafe { CStr::from_ptr(stage) };
            Some(text.to_str().map_err(|_| FfiError::InvalidArgument {
                field: "stage",
                reason: "not UTF-8",
            })?)
        };
        let stage = F::stage(name).map_err(FfiError::Stage)?;
        sessions.with(client, |s| {
            s.prediction = Some(local_player::<F>(stage, s.client.tick_rate_hz()));
            Ok(HightickStatus::Ok)
        })
    })
}

/// `hightick_prediction`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn prediction<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut HightickPrediction,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe { read_out(sessions, client, out, |s| Ok(predictor(s, client)?.view())) }
}

/// `hightick_predicted_entity`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn predicted_entity<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut F::Entity,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe {
        read_out(sessions, client, out, |s| {
            let Some(view) = predictor(s, client)?.view() else {
                return Ok(None);
            };
            let id = EntityId(view.entity as u16);
            let world = s.client.core().world();
            Ok(world.get(id).map(|e| F::entity(e, Some(view.position))))
        })
    }
}

/// `hightick_prediction_stats`.
///
/// # Safety
/// `out` is null or valid for one write.
pub unsafe fn prediction_stats<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    out: *mut HightickPredictionStats,
) -> HightickStatus {
    // SAFETY: forwarded contract.
    unsafe {
        read_out(sessions, client, out, |s| {
            Ok(Some(predictor(s, client)?.stats()))
        })
    }
}

/// `hightick_prediction_smoothing`.
pub fn prediction_smoothing<F: FfiGame>(
    sessions: &Sessions<F>,
    client: HightickClient,
    smoothing: f32,
) -> HightickStatus {
    guarded(|| {
        if !(0.0..1.0).contains(&smoothing) {
            return Err(FfiError::InvalidArgument {
                field: "smoothing",
                reason: "outside 0 (off) to below 1",
            });
        }
        sessions.with(client, |s| {
            let p = s
                .prediction
                .as_deref_mut()
                .ok_or(FfiError::NotPredicting(client))?;
            p.set_smoothing((smoothing > 0.0).then_some(smoothing));
            Ok(HightickStatus::Ok)
        })
    })
}
