//! The catalog a command answers from: the `mldebug-catalog` crate's types and parsers, plus the
//! files this binary embeds at build time (see `build.rs`) and the choice between them and
//! `--catalog DIR`.

pub use mldebug_catalog::*;

use crate::context::Context;
use std::borrow::Cow;
use std::sync::OnceLock;

mod embedded_files {
    include!(concat!(env!("OUT_DIR"), "/embedded_catalog.rs"));
}

/// The catalog files compiled into this binary: (path relative to the repository root, text).
pub fn embedded_files() -> &'static [(&'static str, &'static str)] {
    embedded_files::FILES
}

/// The embedded catalog, parsed on first use.
pub fn embedded() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        parse_files(
            embedded_files()
                .iter()
                .map(|(p, t)| (p.to_string(), t.to_string()))
                .collect(),
        )
    })
}

/// The catalog a command answers from: `--catalog DIR` when given, else the embedded one.
pub fn open(g: &Context) -> crate::Result<Cow<'static, Catalog>> {
    match &g.catalog {
        Some(dir) => Ok(Cow::Owned(from_dir(dir)?)),
        None => Ok(Cow::Borrowed(embedded())),
    }
}
