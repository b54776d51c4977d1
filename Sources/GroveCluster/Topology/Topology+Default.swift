extension Topology {
    /// The text of `Topologies/default.json`; a test keeps the two equal.
    static let defaultJSON = #"""
        {
          "$schema": "../docs/topology.schema.json",
          "name": "default",
          "workers": [
            { "name": "main" },
            { "name": "io", "arguments": ["--io-delay-ms", "400"] }
          ],
          "machines": [
            { "name": "auth", "type": "AuthFlow", "worker": "main", "durability": "state", "onEnd": "stay" },
            { "name": "loader", "type": "DataLoader", "worker": "main", "durability": "state", "onEnd": "restart" },
            { "name": "poller", "type": "PollingService", "worker": "main", "keyed": true, "durability": "state", "onEnd": "restart" },
            { "name": "form", "type": "UserForm", "worker": "main", "durability": "state", "onEnd": "restart" },
            { "name": "search", "type": "Search", "worker": "main", "durability": "state", "onEnd": "restart" },
            { "name": "login", "type": "LoginFlow", "worker": "main", "durability": "state", "onEnd": "restart" },
            { "name": "navigator", "type": "AppNavigator", "worker": "main", "durability": "state", "onEnd": "restart" },
            { "name": "counter", "type": "Counter", "worker": "main", "keyed": true, "durability": "state", "onEnd": "remove" }
          ],
          "io": [
            { "request": "Authenticate", "worker": "io" },
            { "request": "VerifyTwoFactor", "worker": "io" },
            { "request": "FetchItems", "worker": "io" },
            { "request": "FetchData", "worker": "io" },
            { "request": "SubmitForm", "worker": "io" }
          ],
          "routes": [
            { "from": "auth", "when": "signedIn", "to": "loader", "event": "load" }
          ],
          "heartbeat": { "intervalMs": 250, "timeoutMs": 1500 },
          "queues": { "mailboxCapacity": 1024, "workerOutbox": 10000, "clientOutbox": 10000 }
        }
        """#
}
