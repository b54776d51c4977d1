package import Synchronization

/// A closure set once and called from any thread, kept in a class rather than as a `Mutex`'s
/// value. A closure stored as the value of a generic container is held at the container's
/// abstraction; every `withLock` (an `inout` access) converts it to the caller's abstraction and
/// back, wrapping it in one more reabstraction thunk each time. Called once per wake-up, a
/// worker's drain hook grew thousands of thunks deep and spent half its loop walking them
/// (`perf`, recovering 50,000 instances). A class reference needs no conversion.
package final class Callback<Argument>: @unchecked Sendable {
    @usableFromInline let call: @Sendable (Argument) -> Void

    package init(_ call: @escaping @Sendable (Argument) -> Void) { self.call = call }

    @inlinable
    package func callAsFunction(_ argument: Argument) { call(argument) }
}

/// A ``Callback`` that may be set later, read under a lock.
package final class CallbackSlot<Argument>: Sendable {
    @usableFromInline let slot = Mutex<Callback<Argument>?>(nil)

    package init() {}

    package func set(_ call: @escaping @Sendable (Argument) -> Void) {
        let callback = Callback(call)
        slot.withLock { $0 = callback }
    }

    /// The callback set last, or nil.
    @inlinable
    package var current: Callback<Argument>? { slot.withLock { $0 } }
}
