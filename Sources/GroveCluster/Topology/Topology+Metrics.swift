extension Topology {
    /// `"metrics"`: where the coordinator serves the topology's metrics in Prometheus' text
    /// format (docs/ARCHITECTURE.md, "Metrics"). Off unless `listen` is set.
    public struct MetricsSettings: Sendable, Equatable {
        /// `host:port` the coordinator listens on for `GET /metrics`, e.g. `127.0.0.1:9464`;
        /// `nil`: no metrics, and nothing counted beyond the coordinator's own integers. Port 0
        /// takes a free port, which `fsm-launch`'s ready line names.
        public var listen: String?
        /// Whether each scrape needs `Authorization: Bearer <token>`, a token a client key with
        /// the `read` role over every machine made (`fsm-send metrics-token`). Always `true` off
        /// loopback; on loopback `false` unless the topology asks (to keep other local users out).
        public var requireToken: Bool

        public init(listen: String? = nil, requireToken: Bool = false) {
            self.listen = listen
            self.requireToken = requireToken
        }

        /// The ZeroMQ endpoint to bind for `listen` (`tcp://127.0.0.1:9464`; port 0 → `*`).
        public var bindEndpoint: String? {
            guard let listen, let colon = listen.lastIndex(of: ":") else { return nil }
            let port = listen[listen.index(after: colon)...]
            return "tcp://\(listen[..<colon]):\(port == "0" ? "*" : port)"
        }
    }
}
