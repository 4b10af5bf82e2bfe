//! A slot of an annotated query: one word, or a phrase's words, and the concept terms marked
//! there (`@name`).

/// The prefix of a concept term; the tokenizer never produces it.
pub const PREFIX: char = '@';

/// The annotated words: a slot holds one word, or a phrase's words, and the concepts marked
/// there (an idiom's slot holds only its concepts).
pub type Slot = Vec<String>;
