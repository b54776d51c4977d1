/// Names a piece of in-flight work of one machine instance, so it can be cancelled or replaced.
///
/// Ids are scoped to one machine instance: two instances using `"search"` never touch each other's
/// work. Ids the user chooses (strings) and ids the runtime generates (numbers) live in different
/// spaces, so they can never collide; the ids of the timeouts Grove names for the machine
/// (``stateTimeout``, ``eventTimeout``) are a third space. Ids are Codable because cancellations
/// cross processes; a user id encodes as a JSON string, a generated id as a JSON number, a
/// reserved id as an object: `{"reserved":"state-timeout"}`.
///
/// ```swift
/// return .task(id: "search") { env in .results(try await env.search(query)) }
/// return .cancel("search")
/// ```
public struct EffectID: Hashable, Sendable, Codable, CustomStringConvertible, ExpressibleByStringLiteral {
    @usableFromInline
    enum Storage: Hashable, Sendable {
        case user(String)
        case generated(UInt64)
        /// Named by Grove, not by the user: a string the user writes can never equal it.
        case reserved(Reserved)
        /// The state timeout of one level of a ``Statechart``, named by the level's path
        /// (`signingIn.twoFactor`): reserved too, coded `{"reserved":"state-timeout/signingIn.twoFactor"}`.
        case levelTimeout(String)
    }

    /// The prefix of a level's state timeout in the coded form. A Grove from before levels
    /// refuses the id (it knows no reserved name with a slash) rather than misreading it as
    /// the plain state timeout.
    static let levelTimeoutPrefix = "state-timeout/"

    /// The ids Grove reserves, by their coded names.
    @usableFromInline
    enum Reserved: String, Hashable, Sendable {
        case stateTimeout = "state-timeout"
        case eventTimeout = "event-timeout"
    }

    @usableFromInline
    let storage: Storage

    /// A user-chosen id.
    public init(_ name: String) { storage = .user(name) }

    /// A user-chosen id written as a literal: `.cancel("search")`.
    public init(stringLiteral value: String) { storage = .user(value) }

    /// An id the runtime generates for anonymous work. Not API: hosts call it.
    package static func generated(_ number: UInt64) -> EffectID { EffectID(storage: .generated(number)) }

    @usableFromInline init(storage: Storage) { self.storage = storage }

    /// The timer of a state timeout (``MachineEffect/stateTimeout(after:send:)``): cancelled when
    /// a ``StateScoped`` machine leaves the state that armed it.
    @inlinable public static var stateTimeout: EffectID { EffectID(storage: .reserved(.stateTimeout)) }

    /// The timer of an event timeout (``MachineEffect/eventTimeout(after:send:)``): cancelled by
    /// the next event the machine receives.
    @inlinable public static var eventTimeout: EffectID { EffectID(storage: .reserved(.eventTimeout)) }

    /// The timer of the state timeout of the level at `path` of a ``Statechart``
    /// (``MachineEffect/stateTimeout(after:in:send:)``): cancelled when the machine leaves that
    /// level, not when it moves inside it.
    package static func stateTimeout(level path: String) -> EffectID { EffectID(storage: .levelTimeout(path)) }

    /// The path of the level whose state timeout this is, `nil` for every other id. For
    /// `fsm-check`, which labels such timers.
    package var stateTimeoutLevel: String? {
        if case .levelTimeout(let path) = storage { return path }
        return nil
    }

    /// `true` for the ids Grove reserves (state, level and event timeouts): no string a user
    /// writes equals one.
    package var isReserved: Bool {
        switch storage {
        case .reserved, .levelTimeout: true
        case .user, .generated: false
        }
    }

    /// `true` when the runtime generated this id for work started without one.
    public var isGenerated: Bool {
        if case .generated = storage { return true }
        return false
    }

    public var description: String {
        switch storage {
        case .user(let name): name
        case .generated(let number): "#\(number)"
        case .reserved(let name): "<\(name.rawValue)>"
        case .levelTimeout(let path): "<\(Self.levelTimeoutPrefix)\(path)>"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let name = try? container.decode(String.self) {
            storage = .user(name)
        } else if let number = try? container.decode(UInt64.self) {
            storage = .generated(number)
        } else if let coded = try? container.decode(ReservedForm.self), let reserved = Reserved(rawValue: coded.reserved) {
            storage = .reserved(reserved)
        } else if let coded = try? container.decode(ReservedForm.self), coded.reserved.hasPrefix(Self.levelTimeoutPrefix),
                  coded.reserved.count > Self.levelTimeoutPrefix.count {
            storage = .levelTimeout(String(coded.reserved.dropFirst(Self.levelTimeoutPrefix.count)))
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an effect id is a string (a name such as \"fetch\"), a whole number from 0 up, "
                    + "or an id Grove reserves: {\"reserved\":\"state-timeout\"}, {\"reserved\":\"event-timeout\"} "
                    + "or {\"reserved\":\"state-timeout/<level>\"}")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .user(let name): try container.encode(name)
        case .generated(let number): try container.encode(number)
        case .reserved(let name): try container.encode(ReservedForm(reserved: name.rawValue))
        case .levelTimeout(let path): try container.encode(ReservedForm(reserved: Self.levelTimeoutPrefix + path))
        }
    }

    /// The coded form of a reserved id: an object, so that no string or number is one.
    private struct ReservedForm: Codable {
        var reserved: String
    }
}
