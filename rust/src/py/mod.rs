//! PyO3 code of the `kassign._core` module (built with the `python` feature).

pub(crate) mod fleet;
