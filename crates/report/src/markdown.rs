//! Markdown tables for summaries and other binaries' output.

/// A GitHub-flavoured Markdown table: a header line, a separator, then one line per row.
///
/// Cells are escaped so that `|` and line breaks inside a cell cannot break the table. Rows shorter
/// than `headers` are padded with empty cells; longer rows keep their extra cells (Markdown
/// renderers ignore them), so no data is silently cut.
pub fn table<H: AsRef<str>, C: AsRef<str>>(headers: &[H], rows: &[Vec<C>]) -> String {
    let mut out = String::new();
    push_line(&mut out, headers.iter().map(|h| escape(h.as_ref())));
    push_line(&mut out, headers.iter().map(|_| "---".to_string()));
    for row in rows {
        let pad = headers.len().saturating_sub(row.len());
        let cells = row
            .iter()
            .map(|c| escape(c.as_ref()))
            .chain(std::iter::repeat_n(String::new(), pad));
        push_line(&mut out, cells);
    }
    out
}

fn push_line(out: &mut String, cells: impl Iterator<Item = String>) {
    out.push('|');
    for cell in cells {
        out.push(' ');
        out.push_str(&cell);
        out.push_str(" |");
    }
    out.push('\n');
}

fn escape(cell: &str) -> String {
    cell.replace('|', "\\|").replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_has_header_separator_and_escaped_cells() {
        let t = table(
            &["name", "value"],
            &[vec!["a|b", "1"], vec!["line\nbreak", "2"], vec!["short"]],
        );
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(
            lines,
            [
                "| name | value |",
                "| --- | --- |",
                "| a\\|b | 1 |",
                "| line break | 2 |",
                "| short |  |",
            ],
            "{t}"
        );
    }
}

/// The warning a report's header carries when any of `revisions` ends in `-dirty` (built from
/// uncommitted code), as a Markdown block quote followed by a blank line; empty otherwise.
pub fn dirty_warning<'a>(revisions: impl IntoIterator<Item = &'a str>) -> String {
    let mut dirty: Vec<&str> = revisions
        .into_iter()
        .filter(|r| r.ends_with("-dirty"))
        .collect();
    dirty.sort_unstable();
    dirty.dedup();
    if dirty.is_empty() {
        return String::new();
    }
    format!(
        "> **Warning: generated from uncommitted code (revision {}): not a committed baseline.**\n\n",
        dirty.join(", ")
    )
}

#[cfg(test)]
mod dirty_tests {
    use super::dirty_warning;

    #[test]
    fn only_a_dirty_revision_gets_the_warning() {
        assert_eq!(dirty_warning(["abc1234", "unknown"]), "");
        let w = dirty_warning(["abc1234", "abc1234-dirty", "abc1234-dirty"]);
        assert!(
            w.starts_with("> **Warning: generated from uncommitted code (revision abc1234-dirty): not a committed baseline.**"),
            "{w}"
        );
    }
}
