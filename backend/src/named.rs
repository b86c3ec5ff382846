//! Enums of named choices (backends, lock designs, timeline layers, circuits) are parsed from
//! their names, case and surrounding space ignored: the names come from command lines and files.

/// The choice among `all` whose name is `text`.
pub fn parse<T: Copy>(all: &[T], name: impl Fn(&T) -> &'static str, text: &str) -> Option<T> {
    let text = text.trim();
    all.iter().copied().find(|v| name(v).eq_ignore_ascii_case(text))
}

/// `Display` as the name and `FromStr` by name for an enum of named choices that has `ALL`
/// and the method `$name`; `$unknown` makes the error for text that names none of them.
#[doc(hidden)]
#[macro_export]
macro_rules! named_choice {
    ($ty:ty, $name:ident, $err:ty, $unknown:expr) => {
        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.pad(self.$name())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $err;
            fn from_str(s: &str) -> ::std::result::Result<Self, $err> {
                $crate::named::parse(&<$ty>::ALL, |v| v.$name(), s).ok_or_else(|| ($unknown)(s))
            }
        }
    };
}
