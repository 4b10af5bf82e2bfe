//! Text → normalised words: the first stage shared by documents and queries.
//!
//! A word is a run of letters and digits; a number keeps its decimal point and exponent
//! (`0.000`, `2e-05`). Numbers become classes where the class is what matters (every zero is
//! `zero`, every NaN `nan`, every infinity `inf`). `camelCase` and `snake_case` identifiers are
//! split (`OutOfMemoryError` → out, of, memory, error), contractions become `not`
//! (`doesn't` → not), British spellings become American ones, and a small stemmer joins word
//! forms (`spikes`, `spiking`, `spiked` → `spik`; `went`, `goes` → `go`). Stop words and single
//! letters are dropped. Everything here is linear in the length of the text.

/// Words too common to rank by. `not` is kept: "loss not decreasing" differs from "loss decreasing".
#[rustfmt::skip]
const STOP_WORDS: &[&str] = &[
    "a", "about", "after", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be",
    "been", "being", "but", "by", "can", "could", "did", "do", "does", "doing", "for", "from",
    "get", "gets", "getting", "got", "had", "has", "have", "having", "he", "her", "here", "him",
    "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "might", "mine", "my",
    "of", "on", "or", "our", "she", "should", "so", "some", "such", "that", "the", "their",
    "them", "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were",
    "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would",
    "you", "your", "im", "ive", "wo", "ca", "sha", "during", "since",
    // Intensifiers and fillers: they say how much, not what.
    "much", "very", "really", "way", "quite", "pretty", "than", "like", "most", "more", "less",
    "even", "still", "actually", "anything", "something", "seems", "seem", "kind", "sort",
    "basically", "literally", "totally", "completely", "somehow", "keeps", "keep", "right",
    "instead", "any", "every", "each", "whatever", "try", "tried", "trying",
    "pls", "please", "hi", "hello", "thanks", "ok",
];

/// Number words, by value: "iteration one" is "iteration 1", "zero" is 0.
#[rustfmt::skip]
const NUMBER_WORDS: &[&str] = &[
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
];

/// Words that negate what follows; each becomes `not`.
#[rustfmt::skip]
const NEGATIONS: &[&str] = &[
    "not", "no", "never", "cannot", "nothing", "neither", "nor", "without",
    // Contractions typed without the apostrophe.
    "dont", "doesnt", "didnt", "cant", "couldnt", "wont", "wouldnt", "isnt", "arent", "wasnt",
    "werent", "hasnt", "havent", "hadnt", "shouldnt", "aint",
];

/// Irregular forms → the base form the stemmer then reduces.
const IRREGULAR: &[(&str, &str)] = &[
    ("went", "go"),
    ("gone", "go"),
    ("goes", "go"),
    ("going", "go"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("rose", "rise"),
    ("risen", "rise"),
    ("fell", "fall"),
    ("fallen", "fall"),
    ("blew", "blow"),
    ("blown", "blow"),
    ("ran", "run"),
    ("broke", "break"),
    ("broken", "break"),
    ("kept", "keep"),
    ("shot", "shoot"),
    ("made", "make"),
    ("took", "take"),
    ("taken", "take"),
    ("ate", "eat"),
    ("eaten", "eat"),
    ("spat", "spit"),
    ("sped", "speed"),
    ("froze", "freeze"),
    ("frozen", "freeze"),
    ("stuck", "stuck"),
];

/// The normalised words of `text`, in order.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for raw in raw_words(text) {
        push_word(raw, &mut out);
    }
    out
}

/// Runs of letters and digits; a `.` between digits and an exponent sign (`2e-05`) stay inside,
/// and so does an apostrophe between letters (`doesn't`).
fn raw_words(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let word_char = |at: usize| -> bool {
            let Some(c) = text[at..].chars().next() else {
                return false;
            };
            c.is_alphanumeric()
        };
        while i < text.len() && !word_char(i) {
            i += text[i..].chars().next().map_or(1, char::len_utf8);
        }
        if i >= text.len() {
            return None;
        }
        let start = i;
        while i < text.len() {
            let c = text[i..].chars().next().unwrap_or(' ');
            if c.is_alphanumeric() {
                i += c.len_utf8();
                continue;
            }
            let prev = bytes[i - 1];
            let next = bytes.get(i + c.len_utf8()).copied().unwrap_or(b' ');
            let inner = match c {
                '.' => prev.is_ascii_digit() && next.is_ascii_digit(),
                '-' | '+' => {
                    matches!(prev, b'e' | b'E')
                        && next.is_ascii_digit()
                        && i >= 2
                        && (bytes[i - 2].is_ascii_digit() || bytes[i - 2] == b'.')
                }
                '\'' | '’' => prev.is_ascii_alphabetic() && next.is_ascii_alphabetic(),
                _ => false,
            };
            if !inner {
                break;
            }
            i += c.len_utf8();
        }
        Some(&text[start..i])
    })
}

/// One raw word → zero or more normalised words appended to `out`.
fn push_word(raw: &str, out: &mut Vec<String>) {
    if let Some(class) = number_class(raw) {
        out.push(class);
        if let Some(size) = size_class(raw) {
            out.push(size.to_string());
        }
        return;
    }
    let raw = raw.replace('’', "'");
    let (base, negated) = split_contraction(&raw);
    for part in split_camel(base) {
        let lower = part.to_lowercase();
        if let Some(w) = normalise(&lower) {
            out.push(w);
        }
    }
    if negated {
        out.push("not".to_string());
    }
}

/// A number's class: `zero`, `nan`, `inf`, or the number as written. `None` for other words.
fn number_class(raw: &str) -> Option<String> {
    let lower = raw.to_ascii_lowercase();
    if let Some(i) = NUMBER_WORDS.iter().position(|w| *w == lower) {
        return Some(if i == 0 { "zero".into() } else { i.to_string() });
    }
    let is_special = matches!(lower.as_str(), "nan" | "inf" | "infinity");
    if matches!(lower.as_str(), "nans" | "infs") {
        return Some(lower[..3].to_string());
    }
    if !is_special && !raw.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let v: f64 = lower.parse().ok()?;
    Some(if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        "inf".into()
    } else if v == 0.0 {
        "zero".into()
    } else {
        lower
    })
}

/// The size class of a number written in scientific notation or with many digits: `tiny`
/// below 1e-4 in magnitude, `huge` from 1e4 on (a gradient norm of 1e-10, a loss of 1e6).
fn size_class(raw: &str) -> Option<&'static str> {
    let v: f64 = raw.parse().ok()?;
    if !v.is_finite() || v == 0.0 {
        return None;
    }
    if v.abs() < 1e-4 {
        Some("tiny")
    } else if v.abs() >= 1e4 {
        Some("huge")
    } else {
        None
    }
}

/// `doesn't` → (`does`, negated); `model's` → (`model`, not negated).
fn split_contraction(raw: &str) -> (&str, bool) {
    let lower_end =
        |suffix: &str| raw.len() > suffix.len() && raw.to_ascii_lowercase().ends_with(suffix);
    if lower_end("n't") {
        return (&raw[..raw.len() - 3], true);
    }
    for suffix in ["'s", "'re", "'ve", "'ll", "'d", "'m"] {
        if lower_end(suffix) {
            return (&raw[..raw.len() - suffix.len()], false);
        }
    }
    (raw, false)
}

/// `DataLoader` → Data, Loader; `OutOfMemoryError` → Out, Of, Memory, Error. A split happens
/// only before a capital followed by a lower-case letter, so `LoRA`, `NaN` and `CUDA` stay whole,
/// and not where both sides would be two letters or fewer (`NaNs`).
fn split_camel(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let cuts: Vec<usize> = (1..chars.len())
        .filter(|&k| {
            let next_lower = chars.get(k + 1).is_some_and(|(_, n)| n.is_lowercase());
            chars[k].1.is_uppercase() && chars[k - 1].1.is_lowercase() && next_lower
        })
        .collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for (n, &k) in cuts.iter().enumerate() {
        let end = cuts.get(n + 1).copied().unwrap_or(chars.len());
        if k - start <= 2 && end - k <= 2 {
            continue;
        }
        parts.push(&word[chars[start].0..chars[k].0]);
        start = k;
    }
    parts.push(&word[chars.get(start).map_or(0, |c| c.0)..]);
    parts
}

/// A lower-case word → its normalised form, or `None` for a stop word or a single letter.
fn normalise(lower: &str) -> Option<String> {
    let unquoted = lower.replace('\'', "");
    if NEGATIONS.contains(&unquoted.as_str()) {
        return Some("not".into());
    }
    if STOP_WORDS.contains(&unquoted.as_str()) {
        return None;
    }
    let mut chars = unquoted.chars();
    if chars.next().is_some_and(|c| c.is_alphabetic()) && chars.next().is_none() {
        return None;
    }
    if unquoted.is_empty() {
        return None;
    }
    Some(stem(&unquoted))
}

/// A deliberately small stemmer: irregular verbs, British spellings, then plural and verb
/// endings, a doubled final consonant, a final `e` and an adverb's `ly`
/// (diverge, diverges, diverged, diverging → diverg; clipped, clipping → clip).
pub fn stem(w: &str) -> String {
    if w.chars().any(|c| !c.is_ascii_alphabetic()) {
        return w.to_string();
    }
    let mut s = match IRREGULAR.iter().find(|(form, _)| *form == w) {
        Some((_, base)) => base.to_string(),
        None => american(w),
    };
    if s.len() > 4 && s.ends_with("ies") {
        s.truncate(s.len() - 3);
        s.push('y');
    }
    for suffix in ["ing", "ed", "es", "s"] {
        if s.len() > suffix.len() + 2
            && s.ends_with(suffix)
            && !s.ends_with("ss")
            && !s.ends_with("us")
        {
            s.truncate(s.len() - suffix.len());
            break;
        }
    }
    let b = s.as_bytes();
    if b.len() >= 4 && b[b.len() - 1] == b[b.len() - 2] && b"bdgmnprt".contains(&b[b.len() - 1]) {
        s.pop();
    }
    if s.len() > 5 && s.ends_with("ly") {
        s.truncate(s.len() - 2);
    }
    if s.len() > 3 && s.ends_with('e') {
        s.pop();
    }
    s
}

/// British → American spelling of the `-ise`/`-isation` family, and the noun to its verb
/// (normalisation, normalization, normalise → normalize).
fn american(w: &str) -> String {
    for noun in ["isation", "ization"] {
        if let Some(i) = w.find(noun) {
            return format!("{}ize{}", &w[..i], &w[i + 7..]);
        }
    }
    for (uk, us) in [
        ("ise", "ize"),
        ("ised", "ized"),
        ("ises", "izes"),
        ("ising", "izing"),
    ] {
        if w.len() >= 7 && w.ends_with(uk) {
            return format!("{}{us}", &w[..w.len() - uk.len()]);
        }
    }
    w.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stemming_joins_word_forms() {
        for w in ["diverge", "diverges", "diverged", "diverging"] {
            assert_eq!(stem(w), "diverg", "{w}");
        }
        for w in ["spike", "spikes", "spiking", "spiked"] {
            assert_eq!(stem(w), "spik", "{w}");
        }
        for w in ["go", "goes", "went", "going", "gone"] {
            assert_eq!(stem(w), "go", "{w}");
        }
        for w in ["clip", "clipped", "clipping", "clips"] {
            assert_eq!(stem(w), "clip", "{w}");
        }
        assert_eq!(stem("stalled"), "stall");
        assert_eq!(stem("loss"), "loss");
        assert_eq!(stem("losses"), "loss");
        assert_eq!(stem("nans"), "nan");
        assert_eq!(stem("batches"), "batch");
        assert_eq!(stem("normalised"), stem("normalized"));
        assert_eq!(stem("utilisation"), stem("utilization"));
        assert_eq!(stem("tokenization"), stem("tokenising"));
        assert_eq!(stem("initialization"), stem("initialise"));
        assert_eq!(stem("slowly"), "slow");
    }

    #[test]
    fn numbers_become_classes() {
        assert_eq!(words("loss: 0.0000"), ["loss", "zero"]);
        assert_eq!(words("loss is 0"), ["loss", "zero"]);
        assert_eq!(words("loss NaN, then -inf"), ["loss", "nan", "inf"]);
        assert_eq!(words("Infinity"), ["inf"]);
        assert_eq!(words("zero after step one"), ["zero", "step", "1"]);
        assert_eq!(
            words("lr 2e-05 at 2.00 GiB"),
            ["lr", "2e-05", "tiny", "2.00", "gib"]
        );
        assert_eq!(words("norm 1e6, 0.5"), ["norm", "1e6", "huge", "0.5"]);
    }

    #[test]
    fn identifiers_and_contractions_split() {
        assert_eq!(
            words("torch.OutOfMemoryError: CUDA"),
            ["torch", "out", "memory", "error", "cuda"]
        );
        assert_eq!(
            words("DataLoader num_workers"),
            ["data", "loader", "num", "worker"]
        );
        assert_eq!(words("LoRA NaN NaNs"), ["lora", "nan", "nan"]);
        assert_eq!(words("it doesnt learn"), ["not", "learn"]);
        assert_eq!(words("loss doesn't decrease"), ["loss", "not", "decreas"]);
        assert_eq!(words("loss won’t go down"), ["loss", "not", "go", "down"]);
        assert_eq!(words("the model's loss"), ["model", "loss"]);
        assert_eq!(words("ln(C)"), ["ln"]);
    }

    #[test]
    fn odd_text_does_not_panic() {
        for t in [
            "",
            "'",
            "’’",
            "e-5",
            "1e-",
            ".5",
            "5.",
            "ünïcödé ß",
            "a-b+c",
            "'s",
            "n't",
        ] {
            let _ = words(t);
        }
    }
}
