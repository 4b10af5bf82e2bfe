//! How results are shown: colour, tables, wrapped text, JSON. Commands compute, then render here.

pub mod json;
pub mod output;
pub mod quotes;
pub mod style;
pub mod table;
pub mod text;
