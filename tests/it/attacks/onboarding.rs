//! The onboarding ends cleanly: no link, device or code from it outlives it or reaches past its fence.
