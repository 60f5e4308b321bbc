//! How the closed sets of words are spelled: one way each, snake_case, in the history, on the
//! wire, in the audit log and on the command line. Older spellings (the wire's camelCase and
//! the command line's kebab-case of earlier versions) are still *read*, never written.

/// A stored or received word this build does not know (a newer IronClaw wrote it, the file
/// was edited by hand, or a person mistyped it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{value}` is not a known {kind}; was this written by a newer IronClaw?")]
pub struct UnknownVariant {
    /// The enum being read, e.g. `TurnStatus`.
    pub kind: &'static str,
    /// The text that was read.
    pub value: String,
}

/// An enum spelled as one snake_case word per variant: serde, `Display`, `FromStr`, `ALL` and
/// `as_str`. `Variant => "word" | "older" | …` also reads the older spellings listed.
///
/// With the calling crate's `ts` feature it derives `ts_rs::TS`, so the web UI's type is the
/// same closed set.
#[macro_export]
macro_rules! text_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident => $text:literal $(| $alias:literal)*),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
        #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
        pub enum $name {
            $($(#[$vdoc])* #[serde(rename = $text)] $variant),+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The one spelling: history, wire, audit log and command line.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text),+
                }
            }

            /// Spellings earlier versions wrote, still accepted when reading.
            pub const fn older_spellings(self) -> &'static [&'static str] {
                match self {
                    $(Self::$variant => &[$($alias),*]),+
                }
            }
        }

        // By hand rather than derived: reading goes through `FromStr`, so the older spellings
        // are accepted in exactly one place.
        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(
                deserializer: D,
            ) -> ::std::result::Result<Self, D::Error> {
                let text = <::std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                text.parse().map_err(serde::de::Error::custom)
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::UnknownVariant;

            fn from_str(s: &str) -> ::std::result::Result<Self, Self::Err> {
                match s {
                    $($text $(| $alias)* => Ok(Self::$variant),)+
                    other => Err($crate::UnknownVariant {
                        kind: stringify!($name),
                        value: other.to_owned(),
                    }),
                }
            }
        }
    };
}

/// rusqlite `ToSql`/`FromSql` through `Display` and `FromStr`, so a type is stored exactly as
/// it is spelled everywhere else. The calling crate must depend on rusqlite.
#[macro_export]
macro_rules! sql_text {
    ($($name:ty),+ $(,)?) => {
        $(
            impl rusqlite::ToSql for $name {
                fn to_sql(&self) -> rusqlite::Result<rusqlite::types::ToSqlOutput<'_>> {
                    Ok(rusqlite::types::ToSqlOutput::from(self.to_string()))
                }
            }

            impl rusqlite::types::FromSql for $name {
                fn column_result(
                    value: rusqlite::types::ValueRef<'_>,
                ) -> rusqlite::types::FromSqlResult<Self> {
                    value
                        .as_str()?
                        .parse()
                        .map_err(|e| rusqlite::types::FromSqlError::Other(Box::new(e)))
                }
            }
        )+
    };
}

/// clap `ValueEnum` for a [`text_enum!`]: the command line takes the one spelling, and the
/// older ones as hidden aliases so existing scripts keep working.
#[cfg(feature = "clap")]
macro_rules! value_enum {
    ($($name:ty),+ $(,)?) => {
        $(
            impl clap::ValueEnum for $name {
                fn value_variants<'a>() -> &'a [Self] {
                    Self::ALL
                }

                fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
                    Some(clap::builder::PossibleValue::new(self.as_str()).aliases(self.older_spellings().iter().copied()))
                }
            }
        )+
    };
}
#[cfg(feature = "clap")]
pub(crate) use value_enum;
