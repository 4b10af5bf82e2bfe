//! The `--model` argument: a Rust type path such as `crate::Net`, `mycrate::models::Net` or
//! `crate::Net<f32>`, checked strictly before any of it is pasted into generated code.

use crate::{Error, Result};

/// A parsed `--model` path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelPath {
    /// `None` for `crate::...` or a bare `Net`; otherwise the crate named first.
    pub krate: Option<String>,
    /// The segments after the crate (`["models", "Net"]`).
    pub rest: Vec<String>,
    /// Generic arguments of the last segment, with their brackets (`<f32>`), or empty.
    pub generics: String,
}

impl ModelPath {
    /// Parse `s`; a bare `Net` means `crate::Net`.
    pub fn parse(s: &str) -> Result<ModelPath> {
        let bad = |why: &str| {
            Error::usage(format!(
                "--model `{s}`: {why}; expected a type path such as `crate::Net` or \
                 `mycrate::models::Net`"
            ))
        };
        let s_trim = s.trim();
        let (path, generics) = match s_trim.find('<') {
            Some(i) => (&s_trim[..i], &s_trim[i..]),
            None => (s_trim, ""),
        };
        if !generics.is_empty() && !generics_ok(generics) {
            return Err(bad("the generic arguments are not a plain list of types"));
        }
        let mut segments: Vec<String> = path.split("::").map(|p| p.trim().to_string()).collect();
        if segments.iter().any(|p| !is_ident(p)) {
            return Err(bad("it is not a Rust type path"));
        }
        let krate = match segments[0].as_str() {
            "crate" if segments.len() > 1 => {
                segments.remove(0);
                None
            }
            "crate" => return Err(bad("it names no type")),
            "self" | "super" | "Self" => {
                return Err(bad("start it with `crate::` or a crate name"))
            }
            _ if segments.len() == 1 => None,
            _ => Some(segments.remove(0)),
        };
        Ok(ModelPath {
            krate,
            rest: segments,
            generics: generics.to_string(),
        })
    }

    /// The path as seen from outside the crate whose library is named `lib`.
    pub fn in_crate(&self, lib: &str) -> String {
        format!("{lib}::{}{}", self.rest.join("::"), self.generics)
    }

    /// The path inside the user's crate (`models::Net`), for messages.
    pub fn inner(&self) -> String {
        format!("{}{}", self.rest.join("::"), self.generics)
    }
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && s != "_"
}

/// `<...>` with balanced brackets, holding only what type arguments are made of.
fn generics_ok(g: &str) -> bool {
    let mut depth = 0i32;
    for (i, c) in g.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => {
                depth -= 1;
                if depth < 0 || (depth == 0 && i != g.len() - 1) {
                    return false;
                }
            }
            ':' | ',' | ' ' | '_' | '&' | '\'' | '[' | ']' | ';' => {}
            c if c.is_ascii_alphanumeric() => {}
            _ => return false,
        }
    }
    depth == 0 && g.len() > 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crate_paths_lose_their_prefix_and_bare_names_mean_crate() {
        let p = ModelPath::parse("crate::models::Net").unwrap();
        assert_eq!(p.krate, None);
        assert_eq!(p.in_crate("mynet"), "mynet::models::Net");
        let p = ModelPath::parse("Net").unwrap();
        assert_eq!((p.krate, p.rest), (None, vec!["Net".to_string()]));
    }

    #[test]
    fn named_crates_and_generics_are_kept() {
        let p = ModelPath::parse("other_crate::Net<f32, 4>").unwrap();
        assert_eq!(p.krate.as_deref(), Some("other_crate"));
        assert_eq!(p.in_crate("other_crate"), "other_crate::Net<f32, 4>");
        assert_eq!(p.inner(), "Net<f32, 4>");
    }

    #[test]
    fn anything_that_is_not_a_type_path_is_refused() {
        for bad in [
            "",
            "crate",
            "crate::",
            "crate::Net; fn main(){}",
            "crate::Net>",
            "crate::Net<f32",
            "crate::Net<f32>::x",
            "self::Net",
            "my-crate::Net",
            "crate::Net<{1+1}>",
        ] {
            let e = ModelPath::parse(bad).unwrap_err();
            assert_eq!(e.exit(), crate::Exit::Usage, "{bad}");
            assert!(
                e.message.starts_with(&format!("--model `{bad}`")),
                "{}",
                e.message
            );
        }
    }
}
