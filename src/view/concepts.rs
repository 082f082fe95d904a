//! The match of `search_concepts` (spec/surface.md §14.1, §14.6 rule 4). Pure.
//!
//! `substring` (the default, §14.1): the query, folded (§14.6 rule 1), is one literal substring
//! of a folded field; `match` names the first field that holds it, in the order `id`, `title`,
//! `description`, `tags`, `body`. `all_terms` (§14.6 rule 4): every term of the query occurs,
//! as a substring after folding, in at least one of the five fields; `match` is the first
//! field that holds the query's first term. Hits are ordered by the match field's rank, then
//! by concept id (byte order).

use crate::view::terms;

/// A field of a concept that a search can match, in rank order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Field {
    /// The concept id.
    Id,
    /// `title`.
    Title,
    /// `description`.
    Description,
    /// Any item of `tags`.
    Tags,
    /// The body.
    Body,
}

impl Field {
    /// The wire name (`match` of a hit).
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Field::Id => "id",
            Field::Title => "title",
            Field::Description => "description",
            Field::Tags => "tags",
            Field::Body => "body",
        }
    }

    /// Every field in rank order.
    pub const ALL: [Field; 5] = [
        Field::Id,
        Field::Title,
        Field::Description,
        Field::Tags,
        Field::Body,
    ];
}

/// The searchable text of one concept (card values: non-empty strings, string tags).
#[derive(Debug, Clone, Default)]
pub struct ConceptText<'a> {
    /// The concept id.
    pub id: &'a str,
    /// `title`, when a non-empty string.
    pub title: Option<&'a str>,
    /// `description`, when a non-empty string.
    pub description: Option<&'a str>,
    /// The string items of `tags`.
    pub tags: Vec<&'a str>,
    /// The body text.
    pub body: &'a str,
}

/// How the query is matched (spec/surface.md §14.6 rule 4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Matcher {
    /// One folded literal substring.
    Substring(String),
    /// Every folded term somewhere; the first term decides `match`.
    AllTerms(Vec<String>),
}

impl Matcher {
    /// The matcher of `query` in `mode` (`"substring"` or `"all_terms"`; anything else is
    /// `substring`).
    #[must_use]
    pub fn new(query: &str, mode: &str) -> Self {
        if mode == "all_terms" {
            Matcher::AllTerms(terms::distinct_terms(query))
        } else {
            Matcher::Substring(terms::fold(query))
        }
    }

    /// The field a concept matches by, if it matches.
    #[must_use]
    pub fn matches(&self, c: &ConceptText<'_>) -> Option<Field> {
        let mut folded = Folded::new(c);
        match self {
            Matcher::Substring(q) => Field::ALL.into_iter().find(|&f| folded.holds(f, q)),
            Matcher::AllTerms(ts) => {
                let first = ts.first()?;
                let field = Field::ALL.into_iter().find(|&f| folded.holds(f, first))?;
                ts[1..]
                    .iter()
                    .all(|t| Field::ALL.into_iter().any(|f| folded.holds(f, t)))
                    .then_some(field)
            }
        }
    }
}

/// The folded fields of a concept, each folded on first use.
struct Folded<'c, 'a> {
    c: &'c ConceptText<'a>,
    fields: [Option<Vec<String>>; 5],
}

impl<'c, 'a> Folded<'c, 'a> {
    fn new(c: &'c ConceptText<'a>) -> Self {
        Self {
            c,
            fields: Default::default(),
        }
    }

    fn holds(&mut self, f: Field, needle: &str) -> bool {
        let c = self.c;
        let values = self.fields[f as usize].get_or_insert_with(|| match f {
            Field::Id => vec![terms::fold(c.id)],
            Field::Title => c.title.map(terms::fold).into_iter().collect(),
            Field::Description => c.description.map(terms::fold).into_iter().collect(),
            Field::Tags => c.tags.iter().map(|t| terms::fold(t)).collect(),
            Field::Body => vec![terms::fold(c.body)],
        });
        values
            .iter()
            .any(|v| memchr::memmem::find(v.as_bytes(), needle.as_bytes()).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn concept() -> ConceptText<'static> {
        ConceptText {
            id: "tables/orders",
            title: Some("Order Facts"),
            description: Some("Revenue per STRASSE"),
            tags: vec!["sales", "Finance"],
            body: "The body mentions customers.",
        }
    }

    #[test]
    fn substring_reports_the_first_field_in_rank_order() {
        let c = concept();
        let m = |q: &str| Matcher::new(q, "substring").matches(&c);
        assert_eq!(m("ORDER"), Some(Field::Id));
        assert_eq!(m("facts"), Some(Field::Title));
        assert_eq!(m("straße"), Some(Field::Description));
        assert_eq!(m("finance"), Some(Field::Tags));
        assert_eq!(m("customers."), Some(Field::Body));
        assert_eq!(m("revenue customers"), None);
    }

    #[test]
    fn all_terms_finds_terms_in_different_fields() {
        let c = concept();
        let m = |q: &str| Matcher::new(q, "all_terms").matches(&c);
        assert_eq!(m("revenue customers"), Some(Field::Description));
        assert_eq!(m("customers, sales!"), Some(Field::Body));
        assert_eq!(m("revenue missing"), None);
        assert_eq!(m("!!!"), None);
    }
}
