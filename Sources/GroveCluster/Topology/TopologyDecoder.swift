import GroveWire

/// Walks a parsed topology document, building the model and collecting every problem on the way
/// instead of stopping at the first. The sections live in `TopologyDecoder+Sections.swift`;
/// this file holds the typed reads they share.
package struct TopologyDecoder {
    /// A key of an object, with what it means and an example, for messages that say what to write.
    struct Field {
        var key: String
        /// A JSON example of the value, e.g. `"\"edge\""`.
        var example: String
        /// What the value is, e.g. `"the worker group that hosts this machine"`.
        var meaning: String

        init(_ key: String, _ example: String, _ meaning: String) {
            self.key = key
            self.example = example
            self.meaning = meaning
        }

        /// `write it like "key": example (meaning)`, the tail of most messages.
        var hint: String { "write it like \"\(key)\": \(example) (\(meaning))" }
    }

    private(set) var issues: [TopologyIssue] = []
    /// Where endpoints left out go: ``RuntimeDirectory/path(environment:uid:)``.
    var runtimeDirectory: String

    init(runtimeDirectory: String) {
        self.runtimeDirectory = runtimeDirectory
    }

    mutating func report(_ code: TopologyIssue.Code, _ path: JSONPath, _ message: String) {
        issues.append(TopologyIssue(code, at: path.description, message))
    }

    // MARK: - Objects and arrays

    /// The members of the object `value`, after reporting keys outside `known`; `nil` after
    /// reporting that `value` is not an object.
    mutating func members(
        of value: JSONValue, at path: JSONPath, known: [String], ignoring ignored: Set<String> = [], what: String
    ) -> [String: JSONValue]? {
        guard case .object(let members) = value else {
            report(.wrongType, path, "expected \(what), found \(Self.describe(value))")
            return nil
        }
        for key in members.keys.sorted() where !known.contains(key) && !ignored.contains(key) {
            let message = if let guess = Self.closest(to: key, among: known) {
                "unknown key '\(key)'; did you mean '\(guess)'?"
            } else {
                "unknown key '\(key)'; remove it (known keys: \(known.joined(separator: ", ")))"
            }
            report(.unknownKey, path.appending(key), message)
        }
        return members
    }

    /// The elements of the array at `field`, each with its path; `[]` when the key is absent
    /// (reported when `required`) or not an array (reported).
    mutating func elements(
        _ field: Field, in members: [String: JSONValue], at path: JSONPath, required: Bool
    ) -> [(path: JSONPath, value: JSONValue)] {
        let fieldPath = path.appending(field.key)
        guard let value = members[field.key] else {
            if required { reportMissing(field, fieldPath) }
            return []
        }
        guard case .array(let values) = value else {
            report(.wrongType, fieldPath, "expected an array, found \(Self.describe(value)); \(field.hint)")
            return []
        }
        return values.enumerated().map { (fieldPath.appending(index: $0.offset), $0.element) }
    }

    // MARK: - Scalars

    /// A non-empty string at `field`, or `nil` after reporting why not.
    mutating func requiredText(_ field: Field, in members: [String: JSONValue], at path: JSONPath) -> String? {
        guard let value = members[field.key] else {
            reportMissing(field, path.appending(field.key))
            return nil
        }
        return text(value, field, at: path.appending(field.key))
    }

    /// A string at `field`, or `fallback` when absent; `nil` after reporting.
    mutating func optionalText(
        _ field: Field, in members: [String: JSONValue], at path: JSONPath, default fallback: String
    ) -> String? {
        guard let value = members[field.key] else { return fallback }
        return text(value, field, at: path.appending(field.key))
    }

    /// A boolean at `field`, or `fallback` when absent; `nil` after reporting.
    mutating func optionalFlag(
        _ field: Field, in members: [String: JSONValue], at path: JSONPath, default fallback: Bool
    ) -> Bool? {
        guard let value = members[field.key] else { return fallback }
        guard case .bool(let flag) = value else {
            report(.wrongType, path.appending(field.key), "expected true or false, found \(Self.describe(value)); \(field.hint)")
            return nil
        }
        return flag
    }

    /// A whole number of at least `minimum` at `field`, or `fallback` when absent; `nil` after
    /// reporting.
    mutating func optionalCount(
        _ field: Field, in members: [String: JSONValue], at path: JSONPath, default fallback: Int, minimum: Int
    ) -> Int? {
        guard let value = members[field.key] else { return fallback }
        let fieldPath = path.appending(field.key)
        let number: Double
        switch value {
        case .number(let value): number = value
        case .integer(let value): number = Double(value)
        case .null, .bool, .string, .array, .object:
            report(.wrongType, fieldPath, "expected a number, found \(Self.describe(value)); \(field.hint)")
            return nil
        }
        guard number.rounded() == number, abs(number) <= 9.0e15 else {
            report(.invalidValue, fieldPath, "expected a whole number, found \(Self.format(number)); \(field.hint)")
            return nil
        }
        guard Int(number) >= minimum else {
            report(.invalidValue, fieldPath, "\(field.key) must be at least \(minimum), found \(Self.format(number)); \(field.hint)")
            return nil
        }
        return Int(number)
    }

    /// An array of strings at `field`, or `[]` when absent; `nil` after reporting.
    mutating func optionalTexts(_ field: Field, in members: [String: JSONValue], at path: JSONPath) -> [String]? {
        guard members[field.key] != nil else { return [] }
        var texts: [String] = []
        var valid = true
        for (elementPath, value) in elements(field, in: members, at: path, required: false) {
            guard case .string(let text) = value else {
                report(.wrongType, elementPath, "expected a string, found \(Self.describe(value)); quote each argument, like \"\(field.key)\": \(field.example)")
                valid = false
                continue
            }
            texts.append(text)
        }
        if case .array = members[field.key] {} else { valid = false }
        return valid ? texts : nil
    }

    /// `value` as a non-empty string, or `nil` after reporting why not.
    mutating func text(_ value: JSONValue, _ field: Field, at path: JSONPath) -> String? {
        guard case .string(let text) = value else {
            report(.wrongType, path, "expected a string, found \(Self.describe(value)); \(field.hint)")
            return nil
        }
        guard !text.isEmpty else {
            report(.invalidValue, path, "\(field.key) is empty; \(field.hint)")
            return nil
        }
        return text
    }

    mutating func reportMissing(_ field: Field, _ path: JSONPath) {
        report(.missingKey, path, "missing required key '\(field.key)'; add it like \"\(field.key)\": \(field.example) (\(field.meaning))")
    }

    // MARK: - Wording

    /// The JSON type of `value`, with the value when it is short: `a number (3)`.
    static func describe(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let flag): "a boolean (\(flag))"
        case .number(let number): "a number (\(format(number)))"
        case .integer(let number): "a number (\(number))"
        case .string(let text) where text.count > 40: "a string (\(JSONValue.string(String(text.prefix(40)) + "…")))"
        case .string(let text): "a string (\(JSONValue.string(text)))"
        case .array: "an array"
        case .object: "an object"
        }
    }

    static func format(_ number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    /// The candidate a typo most likely meant: same letters ignoring case, one a prefix of the
    /// other, or within a small edit distance.
    package static func closest(to word: String, among candidates: [String]) -> String? {
        let lowered = word.lowercased()
        if let match = candidates.first(where: { $0.lowercased() == lowered }) { return match }
        var best: (candidate: String, distance: Int)?
        for candidate in candidates {
            let other = candidate.lowercased()
            let shorter = min(lowered.count, other.count)
            let distance = if shorter >= 3, lowered.hasPrefix(other) || other.hasPrefix(lowered) {
                1
            } else {
                editDistance(Array(lowered), Array(other))
            }
            let limit = max(1, min(3, shorter / 3))
            if distance <= limit, distance < (best?.distance ?? .max) {
                best = (candidate, distance)
            }
        }
        return best?.candidate
    }

    /// Levenshtein distance, with transpositions counted as one edit.
    private static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
