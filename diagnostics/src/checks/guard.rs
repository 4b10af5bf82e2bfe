//! Turning a panic inside a model into a value, quietly.
//!
//! `catch_unwind` alone would still let the default panic hook print the message and a backtrace
//! to stderr, and checks never print. So the first call installs a process-wide hook that stays
//! silent on threads inside [`catch`] (a thread-local flag) and defers to the previous hook
//! everywhere else; the panic's message and location are kept for the finding.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// True while this thread runs inside [`catch`].
    static QUIET: Cell<bool> = const { Cell::new(false) };
    /// Where the last quiet panic happened (`file:line`).
    static LOCATION: RefCell<Option<String>> = const { RefCell::new(None) };
}

static INSTALL: Once = Once::new();

fn install_hook() {
    INSTALL.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if QUIET.with(Cell::get) {
                let place = info
                    .location()
                    .map(|l| format!("{}:{}", l.file(), l.line()));
                LOCATION.with(|l| *l.borrow_mut() = place);
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `f`; a panic comes back as `Err(message)` ("message (at file:line)"), without printing.
pub(crate) fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    let was_quiet = QUIET.with(|q| q.replace(true));
    let outcome = panic::catch_unwind(AssertUnwindSafe(f));
    QUIET.with(|q| q.set(was_quiet));
    outcome.map_err(|payload| {
        let message = if let Some(s) = payload.downcast_ref::<&str>() {
            (*s).to_string()
        } else if let Some(s) = payload.downcast_ref::<String>() {
            s.clone()
        } else {
            "a panic with a non-text payload".to_string()
        };
        match LOCATION.with(|l| l.borrow_mut().take()) {
            Some(place) => format!("{message} (at {place})"),
            None => message,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_its_message_with_the_place() {
        let r: Result<(), String> = catch(|| panic!("boom {}", 7));
        let msg = r.unwrap_err();
        assert!(msg.starts_with("boom 7 (at "), "{msg}");
        assert!(msg.contains("guard.rs"), "{msg}");
        assert_eq!(catch(|| 3), Ok(3));
    }
}
