//! The backend flags every backend reads (`--target-cpu`, `--llvm-opt`, `--max-frames`,
//! `--link`), a leaf that [`crate::backend`] and the two build steps ([`crate::rust_build`],
//! [`crate::llvm_link`]) import, so that none of them imports a module that imports it back.

use clap::ValueEnum;

/// How an executable links the C library (`--link`).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) enum Link {
    /// Statically, into one self-contained file: nothing to install beside it, and no shared
    /// library pages resident in each process (a service under load peaks about 1.4 MiB lower,
    /// bench/README.md, "Soak"). The C library then resolves host names and user names through
    /// the shared NSS modules of the glibc it was linked with, found at run time.
    #[default]
    Static,
    /// Against the system's shared C library (`libc.so.6`, `libm.so.6`): for a machine whose
    /// name service needs NSS modules of its own glibc (LDAP, systemd-resolved plugins).
    Dynamic,
}

/// The backend flags, from the command line.
pub(crate) struct Target<'a> {
    /// The CPU to generate code for, on both code generators (`--target-cpu`).
    pub(crate) cpu: &'a str,
    /// LLVM's optimization level (`--llvm-opt`).
    pub(crate) llvm_opt: u8,
    /// The interpreter's call-depth limit (`--max-frames`).
    pub(crate) max_frames: usize,
    /// How executables link the C library (`--link`).
    pub(crate) link: Link,
}

impl Target<'_> {
    /// The LLVM emitter's options for a program (a service serving `openapi` with
    /// `--openapi-route`).
    pub(crate) fn llvm(&self, openapi: Option<&str>) -> nagi_emit_llvm::Options {
        nagi_emit_llvm::Options {
            target_cpu: self.cpu.to_string(),
            opt_level: self.llvm_opt,
            export: Vec::new(),
            openapi: openapi.map(str::to_owned),
        }
    }
}

/// What to add to a failed link's message when it linked statically: the usual cause.
pub(crate) fn static_link_hint(link: Link) -> &'static str {
    match link {
        Link::Static => {
            "\nnagic: note: static linking needs the C library's static archives (libc.a, libm.a: the Debian and \
             Ubuntu package libc6-dev); `--link=dynamic` links the shared ones instead"
        }
        Link::Dynamic => "",
    }
}
