//! Error collection, so one expansion reports every mistake at once (after serde's `Ctxt`).

use std::cell::RefCell;
use std::fmt::Display;

use quote::ToTokens;

/// Collects errors while the input is parsed and checked.
///
/// Dropping a context whose errors were never taken with [`Ctxt::check`] panics, so an error can
/// not be lost silently.
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error spanning the tokens of `obj`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, obj: T, message: M) {
        self.syn_error(syn::Error::new_spanned(obj.into_token_stream(), message));
    }

    /// Records an error from syn's parser.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("error recorded after Ctxt::check")
            .push(error);
    }

    /// Takes the errors: `Err` with all of them combined, `Ok` when there were none.
    pub fn check(self) -> syn::Result<()> {
        let errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("Ctxt::check called twice");
        let mut errors = errors.into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}
