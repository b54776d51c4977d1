public import Grove

/// SwiftTea's effect type for reducers run by a ``Store``: `Effect<SearchAction>`.
///
/// A store's reducer receives its environment as a parameter and its effect closures capture what
/// they need, so the effect itself has no environment. Programs that let the host hand the
/// environment to effects write a `TeaProgram` with `TeaEffect` instead.
///
/// It lives in this module, not in `Grove`: a module-level `Effect` would hide the `Effect` that
/// `Machine` and `TeaProgram` conformers write unqualified. Import `GroveTea` only where a file
/// writes SwiftTea's free reducers.
public typealias Effect<Action: Sendable> = TeaEffect<Action, Void>
