//! The frontmatter side of an attested computation (spec/concept-patch.md §3.7), shared by the
//! concept patch (`put_attested_computation`) and the migration (spec/migration.md §6.6
//! rule 1), so both tools produce the same bytes. Pure; the computation model itself is
//! [`crate::okf::computation`].

use crate::okf::computation::{AttestedComputation, ComputationBody};
use crate::okf::yaml::{Node, NodeKind};
use crate::plan::doc_edit::{
    check_root, check_touched, remove_key, require_mapping, root_get, set_scalar, set_value,
    DocEdit, OpResult, Reject,
};
use crate::plan::edit::{Frontmatter, NewValue, Scalar, Seg};

/// The frontmatter reconcile of `put_attested_computation` (§3.7) on a frontmatter alone,
/// for the migration (spec/migration.md §6.6 rule 1): the root checks of a concept opened
/// for a patch, then exactly the edits of the patch, so both tools produce the same bytes.
///
/// # Errors
/// `(code, message)` of the rejection (`invalid_presentation`, `ambiguous_presentation` or
/// an editor code).
pub(crate) fn reconcile_computation_frontmatter(
    fm: Frontmatter,
    crlf: bool,
    c: &AttestedComputation,
) -> Result<Frontmatter, (&'static str, String)> {
    let mut doc = DocEdit {
        path: String::new(),
        prefix: String::new(),
        fm,
        closing: String::new(),
        body: String::new(),
        crlf,
    };
    check_root(&doc)
        .and_then(|()| put_computation_frontmatter(&mut doc, c))
        .map_err(|r| (r.code, r.message))?;
    Ok(doc.fm)
}

/// The frontmatter side of §3.7: `type`, `runtime`, `parameters`, `executor`, `attester` and
/// `computation`.
pub(crate) fn put_computation_frontmatter(
    doc: &mut DocEdit,
    c: &AttestedComputation,
) -> OpResult<()> {
    set_scalar(
        doc,
        &[],
        "type",
        Scalar::Str("Attested Computation".to_owned()),
    )?;
    set_scalar(doc, &[], "runtime", Scalar::Str(c.runtime.clone()))?;
    put_parameters(doc, c)?;
    // executor
    let receipt = NewValue::FlowSeq(
        c.executor
            .receipt
            .iter()
            .map(|r| NewValue::str(r))
            .collect(),
    );
    match root_get(doc, "executor") {
        None => set_value(
            doc,
            &[],
            "executor",
            &NewValue::BlockMap(vec![
                ("resource".to_owned(), NewValue::str(&c.executor.resource)),
                ("receipt".to_owned(), receipt),
            ]),
        )?,
        Some(node) => {
            let node = node.clone();
            require_mapping(&node, &doc.path, "executor is not a mapping")?;
            let path = [Seg::Key("executor")];
            set_scalar(
                doc,
                &path,
                "resource",
                Scalar::Str(c.executor.resource.clone()),
            )?;
            let same = node
                .get("receipt")
                .and_then(Node::items)
                .is_some_and(|items| {
                    items.len() == c.executor.receipt.len()
                        && items
                            .iter()
                            .zip(&c.executor.receipt)
                            .all(|(i, r)| i.as_str() == Some(r.as_str()))
                });
            if !same {
                set_value(doc, &path, "receipt", &receipt)?;
            }
        }
    }
    match root_get(doc, "attester") {
        None => set_value(
            doc,
            &[],
            "attester",
            &NewValue::BlockMap(vec![(
                "resource".to_owned(),
                NewValue::str(&c.attester_resource),
            )]),
        )?,
        Some(node) => {
            require_mapping(node, &doc.path, "attester is not a mapping")?;
            set_scalar(
                doc,
                &[Seg::Key("attester")],
                "resource",
                Scalar::Str(c.attester_resource.clone()),
            )?;
        }
    }
    match &c.body {
        ComputationBody::File { path } => {
            set_scalar(doc, &[], "computation", Scalar::Str(path.clone()))?;
        }
        ComputationBody::Inline { .. } => remove_key(doc, &[], "computation")?,
    }
    Ok(())
}

fn parameter_value(p: &crate::okf::computation::Parameter) -> NewValue {
    NewValue::FlowMap(vec![
        ("name".to_owned(), NewValue::str(&p.name)),
        ("type".to_owned(), NewValue::str(&p.type_)),
        (
            "required".to_owned(),
            NewValue::plain(if p.required { "true" } else { "false" }),
        ),
    ])
}

/// Parameters merged by name (§3.7). Existing items keep their other keys; new items are
/// appended. When the merged order differs from the requested one, the sequence is re-rendered
/// only if no item carries keys beyond `name`, `type`, `required`.
fn put_parameters(doc: &mut DocEdit, c: &AttestedComputation) -> OpResult<()> {
    let desired_list = NewValue::BlockSeq(c.parameters.iter().map(parameter_value).collect());
    let Some(node) = root_get(doc, "parameters") else {
        let v = if c.parameters.is_empty() {
            NewValue::FlowSeq(Vec::new())
        } else {
            desired_list
        };
        return set_value(doc, &[], "parameters", &v);
    };
    check_touched(node, &doc.path)?;
    let Some(items) = node.items().map(<[Node]>::to_vec) else {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "parameters is not a sequence",
        ));
    };
    let mut names = Vec::new();
    for i in &items {
        match i.get("name").and_then(Node::as_str) {
            Some(n) if matches!(i.kind, NodeKind::Mapping { .. }) => names.push(n.to_owned()),
            _ => {
                return Err(Reject::new(
                    "invalid_presentation",
                    &doc.path,
                    "a parameters item is not a mapping with a string name",
                ))
            }
        }
    }
    let wanted: Vec<&str> = c.parameters.iter().map(|p| p.name.as_str()).collect();
    // Remove undesired items (from the end so indices stay valid).
    let mut current = names.clone();
    for i in (0..names.len()).rev() {
        if !wanted.contains(&names[i].as_str()) {
            if current.len() == 1 {
                return set_value(doc, &[], "parameters", &desired_list_or_empty(c));
            }
            doc.fm
                .remove_item(&[Seg::Key("parameters")], i)
                .map_err(|e| Reject::edit(&e, &doc.path))?;
            current.remove(i);
        }
    }
    // Update existing items.
    for p in &c.parameters {
        if let Some(i) = current.iter().position(|n| n == &p.name) {
            let path = [Seg::Key("parameters"), Seg::Index(i)];
            set_scalar(doc, &path, "type", Scalar::Str(p.type_.clone()))?;
            set_scalar(
                doc,
                &path,
                "required",
                Scalar::Plain(if p.required { "true" } else { "false" }.to_owned()),
            )?;
        }
    }
    // Append new ones.
    for p in &c.parameters {
        if !current.contains(&p.name) {
            doc.fm
                .append_item(&[Seg::Key("parameters")], &parameter_value(p))
                .map_err(|e| Reject::edit(&e, &doc.path))?;
            current.push(p.name.clone());
        }
    }
    if current
        .iter()
        .map(String::as_str)
        .eq(wanted.iter().copied())
    {
        return Ok(());
    }
    // Reorder: only when no item has extension keys.
    let plain_items = root_get(doc, "parameters")
        .and_then(Node::items)
        .is_some_and(|items| {
            items.iter().all(|i| {
                i.entries().is_some_and(|e| {
                    e.iter()
                        .all(|(k, _)| matches!(k.scalar_text(), Some("name" | "type" | "required")))
                })
            })
        });
    if !plain_items {
        return Err(Reject::new(
            "invalid_presentation",
            &doc.path,
            "parameters with extension keys cannot be reordered losslessly",
        ));
    }
    set_value(doc, &[], "parameters", &desired_list_or_empty(c))
}

fn desired_list_or_empty(c: &AttestedComputation) -> NewValue {
    if c.parameters.is_empty() {
        NewValue::FlowSeq(Vec::new())
    } else {
        NewValue::BlockSeq(c.parameters.iter().map(parameter_value).collect())
    }
}
