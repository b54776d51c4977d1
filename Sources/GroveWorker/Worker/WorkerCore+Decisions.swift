import Grove
import GroveCluster
@_spi(GroveInternal) import GroveWire

extension WorkerCore {
    /// What the worker does with one message from the coordinator, lone or an envelope of a batch;
    /// decided by ``decide(_:payload:now:)``. The event's case carries nothing, so
    /// deciding an event allocates nothing.
    enum Decision: Equatable {
        /// Hand the event to the machine at the message's address (a keyed instance starts with its
        /// first event): answered by the machine with the state it committed, or `accepted` as soon
        /// as it is taken with the no-wait flag.
        case deliver
        /// Answer `accepted` at once, neither decoding the payload nor touching the machine (`echo`).
        case accept
        /// Queue this request on the machine, behind its events, to be answered in turn; a keyed
        /// instance no event has started is not started for it.
        case request(MachineRequest)
        /// Run the io request (the payload) with this worker's handler, as a task keyed by the
        /// message's correlation (the call id).
        case serve
        /// Cancel the task of the io request served under the message's correlation; its result
        /// is never sent, and `io-cancelled` goes once it has ended (``WorkerCore/taskEnded(_:)``).
        case stopServing
        /// Answer the `io-cancel` at once with `io-cancelled`: no task of that call runs here.
        case answerCancel(IOCancelAnswer.TaskFate)
        /// Hand an io call's result to the machine waiting for it (call id = correlation); the
        /// core no longer counts the call as waiting.
        case complete(IOCallResult)
        /// Publish state changes only for the topics these subscriptions watch.
        case observe(Observation)
        /// Refuse clients' events of these patterns, quarantined for every address.
        case quarantine(QuarantinedPatterns)
        /// Write these adopted instances and let them leave memory; say so (handoff).
        case release(HandoffRelease)
        /// Take back from the shared store those of these instances with work due (handoff).
        case returned(HandoffRelease)
        /// Judge direct requests by this client table (docs/DIRECT-ROUTES.md, 1.5).
        case access(ClientTable)
        /// Judge direct requests' placement by this view of the pool (handoff).
        case placement(PlacementView)
        /// Session actions (a welcome, an error from the coordinator), run in order.
        case act([WorkerAction])
        /// List, drop or retry this worker's quarantined events (an admin's `dead-letters`).
        case deadLetters(DeadLetterRequest)
        /// Answer the message with this error.
        case refuse(WireError)
        /// Nothing: a heartbeat (hearing it was all it said), a second cancel for a call whose
        /// task is ending, a result for a call no longer waited for.
        case ignore
    }

    /// A request on a machine other than an event.
    enum MachineRequest: Equatable {
        /// `get`: answered with the state after every event before it.
        case state
        /// `stop`: answered with the final state.
        case stop
        /// `cancel`: cancels the effect the payload names, answered `accepted`.
        case cancel
        /// `restart`: starts the machine again from its initial state (stopping it first when
        /// it runs), answered with the new instance's state.
        case restart
    }

    /// The one place that decides what becomes of a message from the coordinator. Called for
    /// every message, events included: the event's case comes first and does nothing else.
    /// - Parameters:
    ///   - header: The message's header (of the envelope, for a batch's).
    ///   - payload: Its payload where it arrived: decoded here only for control messages.
    ///   - now: When its batch arrived.
    mutating func decide(_ header: Header, payload: ArraySlice<UInt8>, now: ContinuousClock.Instant) -> Decision {
        if header.flags.contains(.keyed), header.kind != .event { return .refuse(Self.keyedRefusal(of: header.kind)) }
        switch header.kind {
        case .event:
            return .deliver
        case .echo:
            return .accept
        case .get:
            return .request(.state)
        case .stop:
            return .request(.stop)
        case .cancel:
            return .request(.cancel)
        case .restart:
            return .request(.restart)
        case .ioRequest:
            serving[header.correlation] = .running
            return .serve
        case .ioCancel:
            return cancelServing(header.correlation)
        case .ioResult:
            // A result for a call no longer waited for (cancelled by its machine, or failed when
            // the coordinator was lost) is dropped unread.
            guard calls.removeValue(forKey: header.correlation) != nil else { return .ignore }
            do {
                return .complete(try IOCallResult(reading: payload, binary: header.flags.contains(.binary)))
            } catch {
                return .complete(.failure(.init(code: IOFailure.Code.codec.rawValue,
                                                message: "the io result could not be read: \(error.message)")))
            }
        case .heartbeat:
            return heartbeat(payload)
        case .observe:
            guard let observation = try? WireJSON.decode(Observation.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "an observe message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .observe(observation)
        case .quarantine:
            guard let patterns = try? WireJSON.decode(QuarantinedPatterns.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "a quarantine message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .quarantine(patterns)
        case .release:
            guard let release = try? WireJSON.decode(HandoffRelease.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "a release message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .release(release)
        case .returned:
            guard let returned = try? WireJSON.decode(HandoffRelease.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "a returned message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .returned(returned)
        case .access:
            // What a worker serving direct routes judges clients by (docs/DIRECT-ROUTES.md, 1.5),
            // sent only to a worker that registered a direct endpoint.
            guard let table = try? WireJSON.decode(ClientTable.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "an access message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .access(table)
        case .placement:
            guard let view = try? WireJSON.decode(PlacementView.self, from: Array(payload), code: .malformedFrame) else {
                return .act([.log(.warning, "a placement message from the coordinator could not be decoded; is it the same Grove version?")])
            }
            return .placement(view)
        case .welcome:
            return .act(welcome(Array(payload), now: now))
        case .error:
            return .act(coordinatorError(Array(payload), correlation: header.correlation, now: now))
        case .deadLetters:
            do {
                return .deadLetters(try WireJSON.decode(DeadLetterRequest.self, from: Array(payload), what: "the dead-letters request"))
            } catch {
                return .refuse(error)
            }
        case .list, .snapshot, .poison, .locate, .batch, .state, .accepted, .listing, .deadLetterList, .states, .poisonList, .location,
             .register, .instances,
             .ioCancelled,
             .stateChanged, .effect, .worker, .output, .machine:
            return .refuse(Self.refusal(of: header.kind)
                ?? WireError(.unknownKind, "a worker does not accept \(header.kind.name) messages"))
        }
    }

    /// Why a request other than an event with an idempotency key (flag bit 4) is refused: only
    /// events change a machine, so only they are made safe to resend that way.
    static func keyedRefusal(of kind: MessageKind) -> WireError {
        WireError(.malformedFrame, "a \(kind.name) request has flag bit 4 (keyed), which only an event may have; clear it "
            + "(docs/PROTOCOL.md, 'Idempotency keys')")
    }

    /// The machine `address` names, as the last welcome placed it here, for starting an
    /// instance of it (called only when none runs).
    /// - Parameter spawning: Whether this may start a keyed instance: events do; reads, stops,
    ///   restarts and cancels do not.
    /// - Throws: ``WireError`` `unknown-machine`, saying why.
    func placement(of address: String, spawning: Bool) throws(WireError) -> Welcome.HostedMachine {
        try Self.placement(of: address, spawning: spawning, placed: !welcomed ? nil : placed[MachineAddress.machine(of: address)],
                           machineTypes: machineTypes, worker: worker)
    }

    /// ``placement(of:spawning:)`` given what it reads of the core: `placed`, what the last
    /// welcome placed here under the machine's name (nil before any welcome). The runtime
    /// calls this one with those fields: a call on its stored core, inlined or not, worked on a
    /// copy of all of it (a retain and a release of each of its buffers, per fresh key).
    static func placement(of address: String, spawning: Bool, placed: Welcome.HostedMachine?, machineTypes: Set<String>,
                          worker: String) throws(WireError) -> Welcome.HostedMachine {
        guard let machine = placed else {
            throw WireError(.unknownMachine, "machine '\(address)' is not placed on worker \(worker)", address: address)
        }
        guard machineTypes.contains(machine.type) else {
            throw WireError(.unknownMachine, "worker \(worker) has no machine type '\(machine.type)'", address: address)
        }
        guard spawning || !MachineAddress.hasKey(address) else { throw notSpawned(address) }
        return machine
    }

    /// The refusal of a request (not an event) for a keyed instance no event has started.
    static func notSpawned(_ address: String) -> WireError {
        WireError(.unknownMachine, "instance \(address) has not been spawned; keyed instances start with their first event",
                  address: address)
    }
}
