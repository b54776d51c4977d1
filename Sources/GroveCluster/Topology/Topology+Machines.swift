public import GroveWire

extension Topology {
    /// A machine of the topology and the worker group that hosts it.
    public struct MachineSpec: Sendable, Equatable {
        /// The machine's name: not empty, no `/`. Its address is the name, or `"name/key"` for an
        /// instance of a keyed machine.
        public var name: String
        /// The machine type name a worker registered, e.g. `"AuthFlow"`.
        public var type: String
        /// The name of the worker group that hosts it.
        public var worker: String
        /// `true` when the machine has one instance per key, addressed `"name/key"`, created on
        /// its first event. Defaults to `false`: a single instance.
        public var keyed: Bool
        /// What of each instance survives its worker process. Defaults to `none`.
        public var durability: Durability
        /// Whether each committed transition of its instances is written to its worker's audit
        /// log (the topology's ``Topology/audit``). Defaults to `false`.
        public var audit: Bool
        /// What becomes of an instance that ends (a terminal state, a stop) or fails (an effect
        /// failed under `.fail`). Defaults to ``EndPolicy/stay``; ``EndPolicy/remove`` is for
        /// keyed machines only.
        public var onEnd: EndPolicy
        /// How an instance is restarted when ``onEnd`` is ``EndPolicy/restart``: its backoff and
        /// restart intensity. Defaults to ``RestartPolicy``'s (5 ends in 10 s, 100 ms to 5 s).
        public var restart: RestartPolicy
        /// Milliseconds an instance of a keyed machine may sit idle (nothing queued, running or
        /// in flight but timers) before it leaves its worker's memory; its next event, or its
        /// next timer, brings it back from the store. A non-durable instance is dropped, its
        /// state lost, as Akka's and Orleans' are. `nil`: never (the default).
        public var passivateAfterMs: Int?

        /// - Parameters:
        ///   - name: The machine's name.
        ///   - type: The registered machine type name.
        ///   - worker: The hosting worker group.
        ///   - keyed: `true` for one instance per key.
        ///   - durability: What survives the worker process.
        ///   - audit: Whether its transitions are written to the audit log.
        ///   - onEnd: What becomes of an instance that ends.
        ///   - restart: How an instance is restarted under `onEnd` `restart`.
        ///   - passivateAfterMs: The idle time after which a keyed instance leaves memory; nil: never.
        public init(name: String, type: String, worker: String, keyed: Bool = false, durability: Durability = .none,
                    audit: Bool = false, onEnd: EndPolicy = .stay, restart: RestartPolicy = RestartPolicy(),
                    passivateAfterMs: Int? = nil) {
            self.name = name
            self.type = type
            self.worker = worker
            self.keyed = keyed
            self.durability = durability
            self.audit = audit
            self.onEnd = onEnd
            self.restart = restart
            self.passivateAfterMs = passivateAfterMs
        }
    }

    /// Runs one io request on a given worker group rather than beside the machine that starts it.
    public struct IOPlacement: Sendable, Equatable {
        /// The io request name (`IORequest.name`), e.g. `"Authenticate"`.
        public var request: String
        /// The worker group whose handler executes it.
        public var worker: String
        /// Milliseconds a call may run before its machine hears `timeout` and the task running
        /// it is cancelled; `nil` for ``Topology/IOLimits/timeoutMs``.
        public var timeoutMs: Int?
        /// The machines whose instances may start it; `nil`: every machine on a worker group
        /// `fsm-launch` starts (an ``WorkerGroup/external`` group's machines only when named, since
        /// whoever holds that group's key could start any request in their name).
        public var machines: [String]?

        /// - Parameters:
        ///   - request: The io request name.
        ///   - worker: The executing worker group.
        ///   - timeoutMs: Its timeout; `nil` for the topology's `ioLimits.timeoutMs`.
        ///   - machines: The machines that may start it; `nil` for every machine not on an external group.
        public init(request: String, worker: String, timeoutMs: Int? = nil, machines: [String]? = nil) {
            self.request = request
            self.worker = worker
            self.timeoutMs = timeoutMs
            self.machines = machines
        }
    }
}
