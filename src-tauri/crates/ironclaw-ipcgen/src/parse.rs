//! Finds the `#[tauri::command]` functions in a source file and reads their signatures.

use quote::ToTokens;
use syn::{FnArg, GenericArgument, Item, Pat, PathArguments, ReturnType, Type};

use crate::model::{Arg, Command, Ty};
use crate::GenError;

/// Arguments Tauri fills in itself; the web UI never passes them.
const INJECTED: &[&str] = &["State", "AppHandle", "Window", "WebviewWindow", "Webview"];

pub(crate) fn commands(module: &str, text: &str) -> Result<Vec<Command>, GenError> {
    let file = syn::parse_file(text).map_err(|e| GenError::Syntax {
        file: module.to_owned(),
        reason: e.to_string(),
    })?;
    let mut out = Vec::new();
    for item in file.items {
        let Item::Fn(f) = item else { continue };
        if !f.attrs.iter().any(is_command_attr) {
            continue;
        }
        let name = f.sig.ident.to_string();
        if !matches!(f.vis, syn::Visibility::Public(_)) {
            return Err(GenError::Shape {
                command: name,
                reason: "must be `pub` so main.rs can register it".into(),
            });
        }
        let mut args = Vec::new();
        for input in &f.sig.inputs {
            let FnArg::Typed(typed) = input else {
                return Err(GenError::Shape {
                    command: name,
                    reason: "a command cannot take `self`".into(),
                });
            };
            let Pat::Ident(ident) = &*typed.pat else {
                return Err(GenError::Shape {
                    command: name,
                    reason: "each argument needs a plain name (the wire key)".into(),
                });
            };
            if is_injected(&typed.ty) {
                continue;
            }
            let arg = ident.ident.to_string();
            let ty = ty(&typed.ty).ok_or_else(|| GenError::UnsupportedType {
                command: name.clone(),
                arg: arg.clone(),
                ty: typed.ty.to_token_stream().to_string(),
            })?;
            args.push(Arg { name: arg, ty });
        }
        let returns = match &f.sig.output {
            ReturnType::Default => Ty::Void,
            ReturnType::Type(_, t) => {
                result_ok(t)
                    .and_then(ty)
                    .ok_or_else(|| GenError::UnsupportedType {
                        command: name.clone(),
                        arg: "(return value)".into(),
                        ty: t.to_token_stream().to_string(),
                    })?
            }
        };
        out.push(Command {
            path: format!("{module}::{name}"),
            docs: docs(&f.attrs),
            name,
            args,
            returns,
        });
    }
    Ok(out)
}

fn is_command_attr(attr: &syn::Attribute) -> bool {
    let segments: Vec<String> = attr
        .path()
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    segments == ["tauri", "command"] || segments == ["command"]
}

fn docs(attrs: &[syn::Attribute]) -> Vec<String> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value().strip_prefix(' ').unwrap_or(&s.value()).to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect()
}

fn last_segment(t: &Type) -> Option<&syn::PathSegment> {
    match t {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        _ => None,
    }
}

fn is_injected(t: &Type) -> bool {
    last_segment(t).is_some_and(|s| INJECTED.contains(&s.ident.to_string().as_str()))
}

fn generic(segment: &syn::PathSegment, index: usize) -> Option<&Type> {
    let PathArguments::AngleBracketed(args) = &segment.arguments else {
        return None;
    };
    args.args
        .iter()
        .filter_map(|a| match a {
            GenericArgument::Type(t) => Some(t),
            _ => None,
        })
        .nth(index)
}

/// The `T` of `Result<T, _>` (or of any alias ending in `Res`/`Result`), else the type itself.
fn result_ok(t: &Type) -> Option<&Type> {
    match last_segment(t) {
        Some(s) if s.ident == "Result" || s.ident == "Res" => generic(s, 0),
        _ => Some(t),
    }
}

fn ty(t: &Type) -> Option<Ty> {
    match t {
        Type::Reference(r) => ty(&r.elem),
        Type::Tuple(tuple) if tuple.elems.is_empty() => Some(Ty::Void),
        Type::Path(_) => {
            let segment = last_segment(t)?;
            let name = segment.ident.to_string();
            let inner = |i| generic(segment, i).and_then(ty).map(Box::new);
            Some(match name.as_str() {
                "String" | "str" | "PathBuf" | "Path" => Ty::String,
                "bool" => Ty::Bool,
                "u8" | "u16" | "u32" | "u64" | "usize" | "i8" | "i16" | "i32" | "i64" | "isize"
                | "f32" | "f64" => Ty::Number,
                "Option" => Ty::Option(inner(0)?),
                "Vec" => Ty::Vec(inner(0)?),
                "Channel" => Ty::Channel(inner(0)?),
                // Generic types other than those above have no single TypeScript name.
                _ if !matches!(segment.arguments, PathArguments::None) => return None,
                _ => Ty::Named(name),
            })
        }
        _ => None,
    }
}
