//! `projects_v2_item, projects_v2, projects_v2_status_update` events. (Not normalized yet.)

use super::{Ctx, NormResult};

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    Err(format!("`{}` events are not normalized yet", ctx.event))
}
