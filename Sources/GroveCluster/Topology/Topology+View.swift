extension Topology {
    /// `"view"`: where `fsm-launch` serves the live view, a web page of the running topology
    /// (docs/ARCHITECTURE.md, "Live view"). Off unless `listen` is set.
    public struct ViewSettings: Sendable, Equatable {
        /// `host:port` the view listens on, e.g. `127.0.0.1:8420`; `nil`: no view. Port 0 takes
        /// a free port, which `fsm-launch`'s `view` line names.
        public var listen: String?

        public init(listen: String? = nil) {
            self.listen = listen
        }

        /// The host and port of ``listen``; `nil` when the view is off.
        public var hostAndPort: (host: String, port: Int)? {
            guard let listen, let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]) else { return nil }
            return (String(listen[..<colon]), port)
        }
    }
}
