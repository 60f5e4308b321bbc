use std::path::Path;
use std::process::ExitCode;

use ironclaw_sandbox::docker;
use ironclaw_sandbox::image::{self, BuildOptions};

use crate::progress::Printer;

pub async fn build(force: bool, offline: bool, base: Option<String>) -> anyhow::Result<ExitCode> {
    let engine = docker::connect().await?;
    let mut printer = Printer::new(false);
    let opts = BuildOptions { offline, base };
    let spec = if force {
        image::build(&engine.docker, &opts, &mut |p| printer.show(p)).await?
    } else {
        image::ensure(&engine.docker, &opts, &mut |p| printer.show(p)).await?
    };
    println!("{}", spec.tag);
    Ok(ExitCode::SUCCESS)
}

pub async fn export(file: &Path) -> anyhow::Result<ExitCode> {
    let engine = docker::connect().await?;
    let spec = image::spec();
    let mut printer = Printer::new(false);
    image::export(&engine.docker, &spec.tag, file, &mut |p| printer.show(p)).await?;
    eprintln!("saved {} to {}", spec.tag, file.display());
    Ok(ExitCode::SUCCESS)
}

pub async fn import(file: &Path) -> anyhow::Result<ExitCode> {
    let engine = docker::connect().await?;
    let mut printer = Printer::new(false);
    let tags = image::import(&engine.docker, file, &mut |p| printer.show(p)).await?;
    for tag in &tags {
        println!("{tag}");
    }
    let wanted = image::spec().tag;
    if !tags.contains(&wanted) {
        eprintln!("note: this archive does not hold {wanted}, the image this ironclaw uses; it will still build its own");
    }
    Ok(ExitCode::SUCCESS)
}
