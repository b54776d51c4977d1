/// Names a piece of in-flight work of one machine instance, so it can be cancelled or replaced.
///
/// Ids are scoped to one machine instance: two instances using `"search"` never touch each other's
/// work. Ids the user chooses (strings) and ids the runtime generates (numbers) live in different
/// spaces, so they can never collide. Ids are Codable because cancellations cross processes; a user
/// id encodes as a JSON string, a generated id as a JSON number.
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
    }

    @usableFromInline
    let storage: Storage

    /// A user-chosen id.
    public init(_ name: String) { storage = .user(name) }

    /// A user-chosen id written as a literal: `.cancel("search")`.
    public init(stringLiteral value: String) { storage = .user(value) }

    /// An id the runtime generates for anonymous work. Not API: hosts call it.
    package static func generated(_ number: UInt64) -> EffectID { EffectID(storage: .generated(number)) }

    init(storage: Storage) { self.storage = storage }

    /// `true` when the runtime generated this id for work started without one.
    public var isGenerated: Bool {
        if case .generated = storage { return true }
        return false
    }

    public var description: String {
        switch storage {
        case .user(let name): name
        case .generated(let number): "#\(number)"
        }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let name = try? container.decode(String.self) {
            storage = .user(name)
        } else if let number = try? container.decode(UInt64.self) {
            storage = .generated(number)
        } else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "an effect id is a string (a name such as \"fetch\") or a whole number from 0 up")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch storage {
        case .user(let name): try container.encode(name)
        case .generated(let number): try container.encode(number)
        }
    }
}
