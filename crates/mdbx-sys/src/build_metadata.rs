// Written by scripts/libmdbx.sh from patches/series; do not edit.
/// The patch set this libmdbx is built with, as its `mdbx_build.metadata` says it.
pub const BUILD_METADATA: &str = "tabula-mdbx-sys:fallocate-enospc+nometasync-gc+dbi-open+write-chunks+dpl-tail+loose-batch+page-zeroing+lck-sync+local-fs+lazy-dp-limit+branchy-search+search-prefetch+meta-read-once+stdfd-poll+big-dpl+growth-written+open-probes+lck-written";
