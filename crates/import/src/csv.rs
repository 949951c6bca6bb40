//! The small CSV dialect of the contact and forcing files: a header row naming the columns
//! (any order, case-insensitive), comma-separated fields, `#` comment lines, blank lines
//! ignored. No quoting: no field of these files needs a comma.

use crate::ImportError;
use crate::text::{TextFile, parse_f64, parse_index};

/// A CSV file read into named columns.
pub(crate) struct Table<'p> {
    pub file: TextFile<'p>,
    pub header_line: usize,
    columns: Vec<String>,
    pub rows: Vec<Row>,
}

/// One data row: its line and its fields (trimmed).
pub(crate) struct Row {
    pub line: usize,
    fields: Vec<String>,
}

impl<'p> Table<'p> {
    /// Splits the file into a header and rows; every column name must be in `known`.
    pub fn parse(file: TextFile<'p>, known: &[&str]) -> Result<Self, ImportError> {
        let mut header: Option<(usize, Vec<String>)> = None;
        let mut rows = Vec::new();
        for l in file.lines() {
            // A byte-order mark is what spreadsheet programs put before the first name.
            let t = l.text.trim_start_matches('\u{feff}').trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let fields: Vec<String> = t.split(',').map(|f| f.trim().to_string()).collect();
            let Some((_, names)) = &header else {
                let names: Vec<String> = fields.iter().map(|f| f.to_ascii_lowercase()).collect();
                check_header(&file, l.no, t, &names, known)?;
                header = Some((l.no, names));
                continue;
            };
            if fields.len() != names.len() {
                return Err(file.err(
                    l.no,
                    format!(
                        "{} field(s), but the header names {} column(s)",
                        fields.len(),
                        names.len()
                    ),
                ));
            }
            rows.push(Row { line: l.no, fields });
        }
        let Some((header_line, columns)) = header else {
            return Err(ImportError::file(
                file.path,
                format!(
                    "the file is empty: expected a header row naming the columns ({})",
                    known.join(", ")
                ),
            ));
        };
        if rows.is_empty() {
            return Err(file.err(header_line, "a header row but no data rows"));
        }
        Ok(Table {
            file,
            header_line,
            columns,
            rows,
        })
    }

    /// True when the header has this column.
    pub fn has(&self, name: &str) -> bool {
        self.columns.iter().any(|c| c == name)
    }

    /// The field of `row` in column `name`; `None` when the column is absent or the field
    /// empty.
    pub fn get<'r>(&self, row: &'r Row, name: &str) -> Option<&'r str> {
        let k = self.columns.iter().position(|c| c == name)?;
        Some(row.fields[k].as_str()).filter(|s| !s.is_empty())
    }

    /// A field that must be present and non-empty.
    pub fn required<'r>(&self, row: &'r Row, name: &str) -> Result<&'r str, ImportError> {
        self.get(row, name)
            .ok_or_else(|| self.file.err(row.line, format!("column `{name}` is empty")))
    }

    /// A required real number.
    pub fn f64(&self, row: &Row, name: &str) -> Result<f64, ImportError> {
        parse_f64(self.required(row, name)?)
            .map_err(|m| self.file.err(row.line, format!("column `{name}`: {m}")))
    }

    /// An optional real number (`None` for an absent column or an empty field).
    pub fn f64_opt(&self, row: &Row, name: &str) -> Result<Option<f64>, ImportError> {
        self.get(row, name)
            .map(|s| {
                parse_f64(s).map_err(|m| self.file.err(row.line, format!("column `{name}`: {m}")))
            })
            .transpose()
    }

    /// A required non-negative integer.
    pub fn index(&self, row: &Row, name: &str) -> Result<usize, ImportError> {
        parse_index(self.required(row, name)?, name).map_err(|m| self.file.err(row.line, m))
    }

    /// An error at the header line.
    pub fn header_err(&self, message: impl Into<String>) -> ImportError {
        self.file.err(self.header_line, message)
    }
}

fn check_header(
    file: &TextFile<'_>,
    no: usize,
    text: &str,
    names: &[String],
    known: &[&str],
) -> Result<(), ImportError> {
    if names.len() == 1 && text.contains(';') {
        return Err(file.err(no, "fields must be separated by commas, not semicolons"));
    }
    if names.iter().any(|n| parse_f64(n).is_ok()) {
        return Err(file.err(
            no,
            format!(
                "missing header row: the first line must name the columns (from: {}), found \
                 `{text}`",
                known.join(", ")
            ),
        ));
    }
    for (k, n) in names.iter().enumerate() {
        if n.is_empty() {
            return Err(file.err(no, format!("column {} has an empty name", k + 1)));
        }
        if !known.contains(&n.as_str()) {
            return Err(file.err(
                no,
                format!(
                    "unknown column `{n}`; the columns of this file are: {}",
                    known.join(", ")
                ),
            ));
        }
        if names[..k].contains(n) {
            return Err(file.err(no, format!("column `{n}` appears twice")));
        }
    }
    Ok(())
}
