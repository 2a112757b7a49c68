//! `sub_issues` events. (Not normalized yet.)

use super::{Ctx, NormResult};

pub(super) fn normalize(ctx: &Ctx) -> NormResult {
    Err(format!("`{}` events are not normalized yet", ctx.event))
}
