import GroveWire

extension TopologyDecoder {
    static let durabilityExample = #"{ "directory": "grove-data/default", "snapshotEvery": 1000, "flush": "process" }"#

    /// `"durability"`: where and how workers keep their durable machines; defaults when absent.
    mutating func decodeDurabilitySettings(in root: [String: JSONValue]) -> Topology.DurabilitySettings? {
        let defaults = Topology.DurabilitySettings()
        guard let value = root["durability"] else { return defaults }
        let path = JSONPath.root.appending("durability")
        guard let members = members(
            of: value, at: path, known: TopologyKeys.durability, what: "an object like \(Self.durabilityExample)"
        ) else { return nil }
        let directoryField = Field("directory", "\"grove-data/default\"",
                                   "the workers' data directory, relative to the topology file")
        let directory = members[directoryField.key].flatMap { text($0, directoryField, at: path.appending(directoryField.key)) }
        if members[directoryField.key] != nil, directory == nil { return nil }
        let range = Topology.DurabilitySettings.snapshotRange
        let everyField = Field("snapshotEvery", "1000", "the events between two state snapshots of a journal machine")
        let every = optionalCount(everyField, in: members, at: path, default: defaults.snapshotEvery, minimum: range.lowerBound)
        if let every, every > range.upperBound {
            report(.invalidValue, path.appending(everyField.key), "snapshotEvery must be at most \(range.upperBound), found \(every); a longer journal only makes recovery slower: \(everyField.hint)")
            return nil
        }
        let flush = optionalChoice(
            Field("flush", "\"process\"", "when a commit counts as done"), in: members, at: path, default: defaults.flush,
            meanings: ["process": "survives the worker being killed", "disk": "synced to the disk: survives the host too"]
        )
        guard let every, let flush else { return nil }
        guard let store = decodeStore(in: members, at: path) else { return nil }
        guard let handoff = decodeHandoff(in: members, at: path, postgres: store.postgres != nil) else { return nil }
        return Topology.DurabilitySettings(directory: directory, snapshotEvery: every, flush: flush, postgres: store.postgres,
                                           handoff: handoff.settings)
    }

    /// `durability.handoff` (`{"graceMs": 2000}`): when a lost pool worker's keyed instances
    /// move to the pool's other workers. Refused without `durability.postgres`: a SQLite file
    /// is on the lost worker's host, where no other worker reads it.
    mutating func decodeHandoff(in members: [String: JSONValue], at path: JSONPath, postgres: Bool) -> DecodedHandoff? {
        guard let value = members["handoff"] else { return DecodedHandoff(settings: nil) }
        let handoffPath = path.appending("handoff")
        guard let fields = self.members(of: value, at: handoffPath, known: TopologyKeys.durabilityHandoff,
                                        what: #"an object like { "graceMs": 2000 }"#) else {
            return nil
        }
        let field = Field("graceMs", "2000",
                          "how long a pool worker may be lost before the pool's other workers adopt its keyed instances")
        guard fields[field.key] != nil else {
            report(.missingKey, handoffPath.appending(field.key), "a handoff needs a grace period: \(field.hint)")
            return nil
        }
        guard let grace = optionalCount(field, in: fields, at: handoffPath, default: 0, minimum: 1) else { return nil }
        let longest = Topology.DurabilitySettings.Handoff.longestGraceMs
        guard grace <= longest else {
            report(.invalidValue, handoffPath.appending(field.key),
                   "graceMs must be at most \(longest) (an hour), found \(grace); remove durability.handoff to wait for the worker instead")
            return nil
        }
        guard postgres else {
            report(.invalidValue, handoffPath,
                   "a handoff adopts a lost worker's instances from the shared store, and this topology keeps them in SQLite files "
                   + "on that worker's host; add durability.postgres, or remove durability.handoff")
            return nil
        }
        return DecodedHandoff(settings: Topology.DurabilitySettings.Handoff(graceMs: grace))
    }

    /// `durability.handoff` decoded: `settings` nil when absent.
    struct DecodedHandoff {
        var settings: Topology.DurabilitySettings.Handoff?
    }

    /// `durability.postgres` (`{"url": ..., "passwordFile": ...}`): the shared PostgreSQL
    /// store, instead of SQLite files, when present; `nil` after reporting. The URL is checked
    /// as the workers will read it, a password in it refused (the topology is no place for one).
    mutating func decodeStore(in members: [String: JSONValue], at path: JSONPath) -> DecodedStore? {
        guard let value = members["postgres"] else { return DecodedStore(postgres: nil) }
        let storePath = path.appending("postgres")
        let example = #"{ "url": "postgres://grove@127.0.0.1:5432/grove", "passwordFile": "secrets/postgres.password" }"#
        guard let fields = self.members(of: value, at: storePath, known: TopologyKeys.durabilityPostgres, what: "an object like \(example)") else {
            return nil
        }
        let urlField = Field("url", "\"postgres://grove@127.0.0.1:5432/grove\"", "the PostgreSQL database, without a password")
        let passwordField = Field("passwordFile", "\"secrets/postgres.password\"",
                                  "a file (mode 0600) with the password on its first line, relative to the topology file")
        guard let urlValue = fields[urlField.key] else {
            report(.missingKey, storePath.appending(urlField.key), "the PostgreSQL store needs a url: \(urlField.hint)")
            return nil
        }
        guard let url = text(urlValue, urlField, at: storePath.appending(urlField.key)) else { return nil }
        let passwordFile = fields[passwordField.key].flatMap { text($0, passwordField, at: storePath.appending(passwordField.key)) }
        if fields[passwordField.key] != nil, passwordFile == nil { return nil }
        do throws(PostgresLocation.Problem) {
            _ = try PostgresLocation(url: url, environment: [:])
        } catch {
            report(.invalidValue, storePath.appending(urlField.key), error.message)
            return nil
        }
        return DecodedStore(postgres: Topology.DurabilitySettings.Postgres(url: url, passwordFile: passwordFile))
    }

    /// `durability.postgres` decoded: nil for SQLite.
    struct DecodedStore {
        var postgres: Topology.DurabilitySettings.Postgres?
    }

    /// `machines[].durability`: `none` when absent.
    mutating func decodeMachineDurability(in members: [String: JSONValue], at path: JSONPath) -> Durability? {
        optionalChoice(
            Field("durability", "\"state\"", "what of the machine survives its worker process"),
            in: members, at: path, default: Durability.none,
            meanings: [
                "none": "nothing, as before", "state": "the state, written before the replies of each batch of events",
                "journal": "every event before it is acknowledged, with a snapshot every durability.snapshotEvery events",
            ]
        )
    }

    /// One of the raw values of `Choice` at `field`, or `fallback` when absent; `nil` after
    /// reporting, with every choice and what it means.
    mutating func optionalChoice<Choice: RawRepresentable & CaseIterable>(
        _ field: Field, in members: [String: JSONValue], at path: JSONPath, default fallback: Choice,
        meanings: [String: String]
    ) -> Choice? where Choice.RawValue == String {
        guard let value = members[field.key] else { return fallback }
        let fieldPath = path.appending(field.key)
        guard let text = text(value, field, at: fieldPath) else { return nil }
        if let choice = Choice(rawValue: text) { return choice }
        let known = Choice.allCases.map(\.rawValue)
        let guess = Self.closest(to: text, among: known).map { "did you mean '\($0)'? " } ?? ""
        let choices = known.map { "\"\($0)\"" + (meanings[$0].map { " (\($0))" } ?? "") }.joined(separator: ", ")
        report(.invalidValue, fieldPath, "unknown \(field.key) '\(text)'; \(guess)use one of \(choices)")
        return nil
    }
}
