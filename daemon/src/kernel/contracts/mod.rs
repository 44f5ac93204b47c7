//! What modules offer each other through the kernel, besides tools and events: typed
//! capabilities and the vocabulary they speak. A module never imports another module (a test
//! walks the source to hold that, `crate::layers`); where one needs what another does, the
//! provider implements a trait defined here and hands it to the kernel with
//! `ctx.provide::<dyn Trait>(..)` (declared under `does.provides` in its manifest), and the
//! user asks for it with `ctx.get::<dyn Trait>()`.
//!
//! - [`vault`], [`secret`]: fetching a granted credential, and the value types that never print.
//! - [`auth`]: which credential this machine's Claude Code sessions run on.
//! - [`harness`]: where the harness plugin is, for the sessions that load it and `vyre harness`.
//! - [`provider`]: the session provider contract (ADR 0030 section 2) and the registry of
//!   providers modules declare.
//! - [`downloads`]: time-limited download links to a file (`files.fetch`).
//! - [`remote`]: calling a tool on a paired Vyre (`ctx.remote()`).
//! - [`sockets`]: each session's own socket, opened by the HTTP surface for the sessions layer.

pub mod auth;
pub mod certificates;
pub mod downloads;
pub mod harness;
pub mod provider;
pub mod remote;
pub mod secret;
pub mod sockets;
pub mod vault;

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

/// A capability's name, as a manifest's `does.provides` lists it. Implemented for the trait
/// object a capability is used through (`impl Capability for dyn VaultAccess`).
pub trait Capability: Send + Sync + 'static {
    const NAME: &'static str;
}

/// The capabilities provided so far: at most one implementation of each.
#[derive(Default)]
pub struct Capabilities {
    // std RwLock: written once per capability at a module's start, read per use.
    by_type: RwLock<HashMap<TypeId, Provided>>,
}

struct Provided {
    by: String,
    value: Box<dyn Any + Send + Sync>,
}

impl Capabilities {
    /// Record `value` as the implementation of `C`, provided by `by`; a second provider of the
    /// same capability is refused (two vaults would be two answers to one question).
    pub fn provide<C: Capability + ?Sized>(&self, by: &str, value: Arc<C>) -> Result<(), String> {
        let mut map = self.by_type.write().expect("capabilities");
        if let Some(existing) = map.get(&TypeId::of::<C>()) {
            return Err(format!(
                "the capability {:?} is already provided by {}",
                C::NAME,
                existing.by
            ));
        }
        map.insert(
            TypeId::of::<C>(),
            Provided {
                by: by.to_string(),
                value: Box::new(value),
            },
        );
        Ok(())
    }

    /// The implementation of `C`, once its provider has started.
    pub fn get<C: Capability + ?Sized>(&self) -> Option<Arc<C>> {
        self.by_type
            .read()
            .expect("capabilities")
            .get(&TypeId::of::<C>())
            .and_then(|p| p.value.downcast_ref::<Arc<C>>())
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    trait Greeter: Send + Sync {
        fn greet(&self) -> String;
    }
    impl Capability for dyn Greeter {
        const NAME: &'static str = "greeter";
    }
    struct English;
    impl Greeter for English {
        fn greet(&self) -> String {
            "hello".into()
        }
    }

    #[test]
    fn one_provider_per_capability_and_users_get_it_by_type() {
        let caps = Capabilities::default();
        assert!(caps.get::<dyn Greeter>().is_none());
        caps.provide::<dyn Greeter>("english", Arc::new(English))
            .unwrap();
        assert_eq!(caps.get::<dyn Greeter>().unwrap().greet(), "hello");
        let again = caps
            .provide::<dyn Greeter>("other", Arc::new(English))
            .unwrap_err();
        assert!(again.contains("already provided by english"), "{again}");
    }
}
