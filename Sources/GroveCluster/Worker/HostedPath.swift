public import Grove
public import GroveRuntime

/// The per-event steps of hosting one machine type: queueing an event and draining the host.
///
/// Built by the inlinable ``WorkerConfiguration/register(_:as:env:)`` so that these closures are
/// compiled where the machine type is known, and so specialized for it. Called from generic
/// code they would look up type metadata for the host's mailbox and items on every event.
@usableFromInline
struct HostedPath<M: Machine>: Sendable {
    @usableFromInline let send: @Sendable (MachineHost<M>, M.Event) throws(HostError) -> Void
    @usableFromInline let sendAwaiting: @Sendable (MachineHost<M>, M.Event,
                                                   @escaping @Sendable (Result<M.State, HostError>) -> Void) throws(HostError) -> Void
    @usableFromInline let drain: @Sendable (MachineHost<M>) async -> Void

    @inlinable
    init() {
        send = { host, event throws(HostError) in try host.send(event) }
        sendAwaiting = { host, event, onCommitted throws(HostError) in try host.send(event, onCommitted: onCommitted) }
        drain = { host in await host.flush() }
    }
}
