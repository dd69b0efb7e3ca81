//! A config's reference file, from the config struct itself: every key with
//! its default and its doc comment, as TOML (`hightick serve --print-config`,
//! `hightick gateway --print-config`).
//!
//! The docs come from the struct's JSON Schema ([`JsonSchema`], derived
//! beside `Serialize`: a field's doc comment is its description, serde's
//! attributes are honoured), the values from the struct's `Default`,
//! serialized in field order. Within a table the plain keys come first, then
//! its tables (`[adapt]`) and arrays of tables (`[[modes]]`). A key unset by
//! default (`None`, a list of tables that is empty, a field skipped when
//! empty) is printed commented out, with the schema's default or its first
//! example (`#[schemars(example = ...)]`) as the value, so the text stays
//! valid TOML that parses to the defaults.
//!
//! [`check`] is the test each config runs on its reference: it parses back to
//! the defaults, holds every key of the serialized default, and names every
//! field, each with a doc.

use std::fmt::{Debug, Display, Write as _};

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value as Json;

/// Width of the doc comments, `# ` included.
const WIDTH: usize = 79;

/// The reference file of config `T`: `header` (a line or a few, printed as
/// comments), then every key with its doc and default.
pub fn text<T: JsonSchema + Serialize + Default>(header: &str) -> String {
    let mut printer = Printer::default();
    for line in header.lines() {
        printer.comment(line);
    }
    if !header.is_empty() {
        printer.comment("");
    }
    printer.comment("Every key with its default. A key commented out is unset by default;");
    printer.comment("the value shown there is an example.");
    printer.out.push('\n');
    printer.print::<T>();
    let end = printer.out.trim_end().len();
    printer.out.truncate(end);
    printer.out.push('\n');
    printer.out
}

/// What is wrong with `T`'s reference ([`text`]), if anything: the text must parse
/// (with `parse`, the config's own parser) to `T::default()`, hold exactly
/// the keys and values of the serialized default, name every field of the
/// schema, and every field must have a doc comment. A key the config does
/// not have must be refused, its error naming the key and its line.
pub fn check<T, E>(parse: impl Fn(&str) -> Result<T, E>) -> Result<(), String>
where
    T: JsonSchema + Serialize + Default + PartialEq + Debug,
    E: Display,
{
    let text = text::<T>("");
    let mut faults = Vec::new();
    match parse(&text) {
        Ok(parsed) if parsed == T::default() => {}
        Ok(parsed) => faults.push(format!("parses to {parsed:?}, not the defaults")),
        Err(e) => faults.push(format!("does not parse: {e}")),
    }
    const UNKNOWN: &str = "no_such_key_in_this_config";
    match parse(&format!("\n{UNKNOWN} = 1\n")) {
        Ok(_) => faults.push(format!("an unknown key `{UNKNOWN}` is accepted")),
        Err(e) => {
            let e = e.to_string();
            if !e.contains(UNKNOWN) || !e.contains(":2:") {
                faults.push(format!("an unknown key on line 2 is refused as `{e}`"));
            }
        }
    }
    // An empty list of tables is printed as a commented-out example table.
    let printed = toml::from_str(&text).map(without_empty_lists);
    let default = toml::Value::try_from(T::default()).map(without_empty_lists);
    match (printed, default) {
        (Ok(printed), Ok(default)) if printed == default => {}
        (Ok(printed), Ok(default)) => faults.push(format!(
            "its keys and values differ from the serialized default:\n{printed:#?}\n{default:#?}"
        )),
        (printed, default) => faults.push(format!("as TOML: {printed:?} / {default:?}")),
    }
    let mut printer = Printer::default();
    printer.print::<T>();
    let mut fields = Vec::new();
    schema_fields("", &schema_of::<T>(), &mut fields);
    for (path, documented) in fields {
        if !documented {
            faults.push(format!("field `{path}` has no doc comment"));
        }
        if !printer.keys.contains(&path) {
            faults.push(format!("field `{path}` is not printed"));
        }
    }
    if faults.is_empty() {
        Ok(())
    } else {
        Err(format!("{}\n--- the reference:\n{text}", faults.join("\n")))
    }
}

/// `value` without its empty lists, at any depth.
fn without_empty_lists(value: toml::Value) -> toml::Value {
    match value {
        toml::Value::Table(table) => toml::Value::Table(
            table
                .into_iter()
                .filter(|(_, v)| v.as_array().is_none_or(|a| !a.is_empty()))
                .map(|(k, v)| (k, without_empty_lists(v)))
                .collect(),
        ),
        toml::Value::Array(items) => {
            toml::Value::Array(items.into_iter().map(without_empty_lists).collect())
        }
        other => other,
    }
}

/// `T`'s JSON Schema, every subschema inline.
fn schema_of<T: JsonSchema>() -> Json {
    schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator()
        .into_root_schema_for::<T>()
        .to_value()
}

/// Every field under `schema` as (dotted path, has a doc), depth first.
fn schema_fields(path: &str, schema: &Json, out: &mut Vec<(String, bool)>) {
    let Some(properties) = struct_schema(schema).and_then(|s| s["properties"].as_object()) else {
        return;
    };
    for (key, property) in properties {
        let path = join(path, key);
        let documented = property["description"]
            .as_str()
            .is_some_and(|d| !d.trim().is_empty());
        out.push((path.clone(), documented));
        schema_fields(&path, property, out);
        if let Some(items) = property.get("items") {
            schema_fields(&path, items, out);
        }
    }
}

/// The schema of a struct (one with `properties`) in `schema`: itself, or
/// the struct inside an `Option`'s `anyOf`.
fn struct_schema(schema: &Json) -> Option<&Json> {
    if schema.get("properties").is_some() {
        return Some(schema);
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| schema[k].as_array())
        .flatten()
        .find_map(struct_schema)
}

/// The struct schema of the items of a list of structs.
fn item_struct_schema(schema: &Json) -> Option<&Json> {
    schema.get("items").and_then(struct_schema)
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// A value of the serialized default, its tables' keys in field order
/// (`serde_json::Value` and `toml::Table` sort them).
#[derive(Debug, Clone, PartialEq)]
enum Node {
    /// `None`.
    Null,
    /// A string, number or bool.
    Scalar(toml::Value),
    /// A list.
    Array(Vec<Node>),
    /// A struct or map, keys in order.
    Table(Vec<(String, Node)>),
}

impl Node {
    /// As a TOML value (`None` nested in a list: left out).
    fn to_toml(&self) -> Option<toml::Value> {
        match self {
            Self::Null => None,
            Self::Scalar(v) => Some(v.clone()),
            Self::Array(items) => Some(toml::Value::Array(
                items.iter().filter_map(Self::to_toml).collect(),
            )),
            Self::Table(entries) => Some(toml::Value::Table(
                entries
                    .iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.to_toml()?)))
                    .collect(),
            )),
        }
    }

    /// The tables of a non-empty list of tables.
    fn tables(&self) -> Option<Vec<&[(String, Node)]>> {
        match self {
            Self::Array(items) if !items.is_empty() => items
                .iter()
                .map(|item| match item {
                    Self::Table(entries) => Some(entries.as_slice()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value TOML can hold")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Scalar(toml::Value::Boolean(v)))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Scalar(toml::Value::Integer(v)))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Node, E> {
        i64::try_from(v)
            .map(|v| Node::Scalar(toml::Value::Integer(v)))
            .map_err(|_| E::custom(format!("{v} is past TOML's integers")))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Node, E> {
        Ok(Node::Scalar(toml::Value::Float(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::Scalar(toml::Value::String(v.to_owned())))
    }

    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Node>()? {
            entries.push(entry);
        }
        Ok(Node::Table(entries))
    }
}

/// Writes the reference and remembers which keys it wrote.
#[derive(Default)]
struct Printer {
    out: String,
    /// Dotted paths of the keys written, commented out or not.
    keys: Vec<String>,
}

impl Printer {
    fn print<T: JsonSchema + Serialize + Default>(&mut self) {
        let schema = schema_of::<T>();
        // JSON keeps the fields in order; `Node` keeps that order.
        let node = serde_json::to_string(&T::default())
            .and_then(|json| serde_json::from_str::<Node>(&json))
            .expect("a config's default serializes to JSON");
        let Node::Table(entries) = node else {
            panic!("a config is a struct");
        };
        self.table("", &schema, &entries);
    }

    /// The keys of the table at `path`: plain ones, then its tables.
    fn table(&mut self, path: &str, schema: &Json, entries: &[(String, Node)]) {
        let properties = struct_schema(schema).and_then(|s| s["properties"].as_object());
        let property = |key: &str| properties.and_then(|p| p.get(key)).unwrap_or(&Json::Null);
        // Fields the default does not serialize (skipped when empty) come last.
        let skipped: Vec<(String, Node)> = properties
            .into_iter()
            .flatten()
            .filter(|(key, _)| !entries.iter().any(|(k, _)| k == *key))
            .map(|(key, _)| (key.clone(), Node::Null))
            .collect();
        let all: Vec<&(String, Node)> = entries.iter().chain(&skipped).collect();
        let is_section = |key: &str, node: &Node| match node {
            Node::Table(_) => struct_schema(property(key)).is_some(),
            Node::Array(items) if items.is_empty() => item_struct_schema(property(key)).is_some(),
            Node::Array(_) => node.tables().is_some(),
            Node::Null => struct_schema(property(key)).is_some(),
            Node::Scalar(_) => false,
        };
        for (key, node) in all.iter().filter(|(k, n)| !is_section(k, n)) {
            let schema = property(key);
            self.doc(schema);
            let name = join(path, key);
            match node.to_toml() {
                Some(value) => {
                    let _ = writeln!(self.out, "{} = {value}", key_text(key));
                    if let Some(example) = example(schema) {
                        self.comment(&format!("e.g. {} = {example}", key_text(key)));
                    }
                }
                None => self.unset_key(key, schema),
            }
            self.keys.push(name);
            self.out.push('\n');
        }
        for (key, node) in all.iter().filter(|(k, n)| is_section(k, n)) {
            let schema = property(key);
            let name = join(path, key);
            match node {
                Node::Table(entries) => {
                    self.doc(schema);
                    let _ = writeln!(self.out, "[{name}]");
                    self.keys.push(name.clone());
                    self.table(&name, schema, entries);
                }
                Node::Null => self.unset_section(&name, schema, false),
                Node::Array(items) if items.is_empty() => {
                    let items = item_struct_schema(schema).unwrap_or(&Json::Null);
                    self.doc(schema);
                    self.keys.push(name.clone());
                    self.unset_section(&name, items, true);
                }
                _ => {
                    self.doc(schema);
                    self.keys.push(name.clone());
                    let items = schema.get("items").unwrap_or(&Json::Null);
                    for entries in node.tables().into_iter().flatten() {
                        let _ = writeln!(self.out, "[[{name}]]");
                        self.table(&name, items, entries);
                    }
                }
            }
        }
    }

    /// A table unset by default, commented out: its header and every key
    /// with the schema's default or example.
    fn unset_section(&mut self, name: &str, schema: &Json, list: bool) {
        if !list {
            self.doc(schema);
            self.keys.push(name.to_owned());
        }
        let (open, close) = if list { ("[[", "]]") } else { ("[", "]") };
        let _ = writeln!(self.out, "# {open}{name}{close}");
        let table = struct_schema(schema).unwrap_or(schema);
        for (key, property) in table["properties"].as_object().into_iter().flatten() {
            self.doc(property);
            self.unset_key(key, property);
            self.keys.push(join(name, key));
        }
        self.out.push('\n');
    }

    /// `# key = <default or example>` (and the example after a default).
    fn unset_key(&mut self, key: &str, schema: &Json) {
        let default = schema
            .get("default")
            .filter(|d| !d.is_null())
            .and_then(json_toml);
        let example = example(schema);
        let value = default.as_ref().or(example.as_ref());
        let value = value.map(|v| format!(" {v}")).unwrap_or_default();
        let _ = writeln!(self.out, "# {} ={value}", key_text(key));
        if let (Some(_), Some(example)) = (default, example) {
            self.comment(&format!("e.g. {} = {example}", key_text(key)));
        }
    }

    /// The doc comment of a field, and the choices of an enum.
    fn doc(&mut self, schema: &Json) {
        let doc = schema["description"].as_str().unwrap_or_default();
        for (i, paragraph) in plain(doc).split("\n\n").enumerate() {
            if i > 0 {
                self.out.push_str("#\n");
            }
            self.wrapped(paragraph);
        }
        let choices = schema["oneOf"].as_array().or(schema["anyOf"].as_array());
        for choice in choices.into_iter().flatten() {
            if let Some(name) = choice.get("const").or(choice["enum"].get(0)) {
                let about = choice["description"].as_str().unwrap_or_default();
                self.wrapped(&format!("{name}: {}", plain(about)));
            }
        }
        if let Some(names) = schema["enum"].as_array() {
            let names: Vec<String> = names.iter().map(Json::to_string).collect();
            self.wrapped(&format!("One of {}.", names.join(", ")));
        }
    }

    /// `text` as `#` lines of at most [`WIDTH`] columns.
    fn wrapped(&mut self, text: &str) {
        let mut line = String::new();
        for word in text.split_whitespace() {
            if !line.is_empty() && 2 + line.len() + 1 + word.len() > WIDTH {
                self.comment(&line);
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            self.comment(&line);
        }
    }

    fn comment(&mut self, line: &str) {
        if line.is_empty() {
            self.out.push_str("#\n");
        } else {
            let _ = writeln!(self.out, "# {line}");
        }
    }
}

/// A key as TOML writes it: bare when it can be.
fn key_text(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if bare {
        key.to_owned()
    } else {
        toml::Value::String(key.to_owned()).to_string()
    }
}

/// The schema's first example, as TOML.
fn example(schema: &Json) -> Option<String> {
    schema["examples"].get(0).and_then(json_toml)
}

/// A JSON value as inline TOML.
fn json_toml(value: &Json) -> Option<String> {
    serde_json::from_value::<Node>(value.clone())
        .ok()?
        .to_toml()
        .map(|v| v.to_string())
}

/// A doc comment as plain text: rustdoc links `[text](target)` and
/// `` [`Path`] `` become their text, `Self::` and `crate::` are dropped.
fn plain(doc: &str) -> String {
    let mut out = String::with_capacity(doc.len());
    // A pointer into the code, "... ([`crate::module`])", is left out.
    let doc = drop_code_pointers(doc);
    let mut rest = doc.as_str();
    while let Some(open) = rest.find('[') {
        out.push_str(&rest[..open]);
        if out.matches('`').count() % 2 == 1 {
            // In code (`[adapt]`): a bracket, not a link.
            out.push('[');
            rest = &rest[open + 1..];
            continue;
        }
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else {
            out.push_str(&rest[open..]);
            rest = "";
            break;
        };
        out.push_str(&after[..close]);
        rest = &after[close + 1..];
        if rest.starts_with('(')
            && let Some(end) = rest.find(')')
        {
            rest = &rest[end + 1..];
        }
    }
    out.push_str(rest);
    let out = out.replace("`Self::", "`").replace("`crate::", "`");
    // Paragraphs stay apart; the lines within one are joined.
    out.split("\n\n")
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// `doc` without its " ([`crate::...`])" groups.
fn drop_code_pointers(doc: &str) -> String {
    let mut out = doc.to_owned();
    while let Some(start) = out.find(" ([`crate::") {
        let Some(len) = out[start..].find("`])") else {
            break;
        };
        out.replace_range(start..start + len + 3, "");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use std::collections::BTreeMap;

    /// How a part is made.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
    #[serde(rename_all = "lowercase")]
    enum Finish {
        /// Left as cast.
        Raw,
        /// Painted over.
        Painted,
    }

    /// A part (`[[parts]]`).
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Part {
        /// Its name.
        name: String,
        /// Extra labels, free form.
        #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
        labels: BTreeMap<String, String>,
    }

    /// The `[limits]` table.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Limits {
        /// Most at once. A long doc that goes on and on past the width of one
        /// line, with a [`Sample::port`] link and a
        /// [link](https://example.invalid).
        ///
        /// A second paragraph.
        most: u32,
        /// A share, 0..1 (`[limits] share`).
        share: f64,
    }

    impl Default for Limits {
        fn default() -> Self {
            Self {
                most: 8,
                share: 0.5,
            }
        }
    }

    /// An optional table.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    struct Remote {
        /// Where.
        #[schemars(example = "https://remote.invalid")]
        url: String,
        /// How long, seconds.
        #[serde(default = "three")]
        timeout_s: u64,
    }

    fn three() -> u64 {
        3
    }

    fn an_address() -> [&'static str; 1] {
        ["10.0.0.1:9000"]
    }

    /// The sample config.
    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Sample {
        /// The port.
        port: u16,
        /// A file, unset by default.
        #[schemars(example = "key.hex")]
        key_file: Option<std::path::PathBuf>,
        /// The finish.
        finish: Finish,
        /// Addresses, none by default.
        #[schemars(example = an_address())]
        addresses: Vec<std::net::SocketAddr>,
        /// The parts.
        parts: Vec<Part>,
        /// Spare parts, none by default.
        spares: Vec<Part>,
        /// The limits.
        limits: Limits,
        /// The remote, unset by default ([`crate::config_file`]).
        remote: Option<Remote>,
        /// The last plain key, after the tables in the struct.
        last: String,
    }

    impl Default for Sample {
        fn default() -> Self {
            let part = |name: &str| Part {
                name: name.to_owned(),
                labels: BTreeMap::new(),
            };
            Self {
                port: 7777,
                key_file: None,
                finish: Finish::Raw,
                addresses: Vec::new(),
                parts: vec![part("a"), part("b")],
                spares: Vec::new(),
                limits: Limits::default(),
                remote: None,
                last: "end \"quoted\"".to_owned(),
            }
        }
    }

    #[test]
    fn the_reference_is_toml_of_the_defaults_with_every_doc() {
        let text = text::<Sample>("sample --print-config");
        println!("{text}");
        check::<Sample, _>(|text| crate::parse_toml::<Sample>(text, "ref")).unwrap();
        for line in [
            "# sample --print-config\n#\n# Every key",
            "# The port.\nport = 7777\n",
            "# A file, unset by default.\n# key_file = \"key.hex\"\n",
            "# \"raw\": Left as cast.\n",
            "addresses = []\n# e.g. addresses = [\"10.0.0.1:9000\"]\n",
            "last = 'end \"quoted\"'\n",
            "# The parts.\n[[parts]]\n# Its name.\nname = \"a\"\n",
            "# Spare parts, none by default.\n# [[spares]]\n# Extra labels, free form.\n# labels =\n# Its name.\n# name =\n",
            "[limits]\n# Most at once.",
            "#\n# A second paragraph.\n",
            "Sample::port` link",
            "# A share, 0..1 (`[limits] share`).\n",
            "# The remote, unset by default.\n# [remote]\n",
            "# timeout_s = 3\n# Where.\n# url = \"https://remote.invalid\"\n",
        ] {
            assert!(text.contains(line), "{line:?} missing from:\n{text}");
        }
        assert!(!text.contains("](https"), "{text}");
        assert!(text.lines().all(|l| l.len() <= WIDTH), "{text}");
    }

    /// A config with an undocumented field.
    #[derive(Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default, deny_unknown_fields)]
    struct Undocumented {
        /// Documented.
        a: u32,
        #[allow(missing_docs)]
        b: u32,
    }

    #[test]
    fn an_undocumented_field_fails_the_check() {
        let err = check::<Undocumented, _>(|text| crate::parse_toml::<Undocumented>(text, "u"))
            .unwrap_err();
        assert!(err.starts_with("field `b` has no doc comment"), "{err}");
    }

    /// A config that takes keys it does not have.
    #[derive(Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
    #[serde(default)]
    struct Lenient {
        /// Documented.
        a: u32,
    }

    #[test]
    fn a_config_that_takes_unknown_keys_fails_the_check() {
        let err = check::<Lenient, _>(|text| crate::parse_toml::<Lenient>(text, "l")).unwrap_err();
        assert!(err.contains("an unknown key"), "{err}");
    }
}
