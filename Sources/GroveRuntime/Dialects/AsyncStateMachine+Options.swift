public import Grove

extension AsyncStateMachine {
    /// How an ``AsyncStateMachine``'s host is configured: its ``HostOptions``, told in the
    /// machine's own states and events.
    public struct Options: Sendable {
        /// The machine address used in errors and logs.
        public var address: String
        /// How many events may wait; a send beyond is refused.
        public var mailboxCapacity: Int
        /// Receives unhandled events (`sameState()` without output) and dropped events.
        public var diagnostics: (@Sendable (Diagnostic) -> Void)?

        /// - Parameters:
        ///   - address: Defaults to `StateMachine`.
        ///   - mailboxCapacity: Defaults to 65,536 events.
        ///   - diagnostics: Receives unhandled and dropped events.
        public init(address: String = "StateMachine", mailboxCapacity: Int = 65_536,
                    diagnostics: (@Sendable (Diagnostic) -> Void)? = nil) {
            self.address = address
            self.mailboxCapacity = mailboxCapacity
            self.diagnostics = diagnostics
        }

        var hostOptions: HostOptions<HostedStateMachine<State, Event>> {
            var options = HostOptions<HostedStateMachine<State, Event>>(address: address, mailboxCapacity: mailboxCapacity)
            if let report = diagnostics {
                options.diagnostics = { @Sendable diagnostic in
                    if let diagnostic = Diagnostic(diagnostic) { report(diagnostic) }
                }
            }
            return options
        }
    }

    /// Something the host noticed that is not a normal transition: ``HostDiagnostic``, with the
    /// machine's own state.
    public enum Diagnostic: Sendable {
        /// The transition was `sameState()` without output: the state was left as it was.
        case unhandled(state: State, event: Event)
        /// A side effect failed (only cancellation-unaware work can).
        case effectFailed(id: EffectID, error: any Error)
        /// Events that were accepted but will never be processed, because the machine stopped.
        case eventsDropped([Event], reason: HostError)
        /// A send was refused because the mailbox was full.
        case mailboxOverflow(event: Event)
        /// Side effects of a transition into a terminal state that were not started.
        case effectsSkippedAtTermination(count: Int)

        /// `nil` for what a state machine of this package cannot cause: its side effects are
        /// closures, never io requests, so none re-issues, and it cannot postpone.
        init?(_ diagnostic: HostDiagnostic<HostedStateMachine<State, Event>>) {
            switch diagnostic {
            case .unhandled(let state, let step): self = .unhandled(state: state.current, event: step.event)
            case .effectFailed(let id, let error): self = .effectFailed(id: id, error: error)
            case .eventsDropped(let steps, let reason): self = .eventsDropped(steps.map(\.event), reason: reason)
            case .mailboxOverflow(let step): self = .mailboxOverflow(event: step.event)
            case .effectsSkippedAtTermination(let count): self = .effectsSkippedAtTermination(count: count)
            case .reissueNotKept, .postponeIgnored: return nil
            }
        }
    }
}
