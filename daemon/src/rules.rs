//! The Rules: the checks every tool call passes before its handler runs (spec section 11).
//!
//! For now this is PERSON_ONLY; the security floor's other rules join here as their modules land.

use crate::tools::{Caller, ToolError, ToolSpec};

pub fn check_call(spec: &ToolSpec, caller: &Caller) -> Result<(), ToolError> {
    if spec.person_only && !caller.is_person() {
        return Err(ToolError::refused(
            "person_only",
            format!(
                "{} can only be called by a person (from the terminal or a paired device), not by {}",
                spec.name,
                caller.label()
            ),
        ));
    }
    Ok(())
}
