import SwiftSyntax

/// What the synthesized `Codable` conformance of a type reads and writes, as far as the
/// declaration shows it.
enum CodableShape {
    /// Stored properties, in declaration order.
    case structure([Field])
    /// Cases, in declaration order.
    case enumeration([Case])
    /// An enum with a raw type: coded as its raw value.
    case rawValue(type: String)

    /// A stored property or an associated value.
    struct Field {
        /// The coding key: the property's name, the value's label, or `_0`, `_1`, … without one.
        var key: String
        /// How the generated code names it: `self.name` for a property, a binding for a value.
        var access: String
        /// The type as written; for an optional, the wrapped type.
        var type: String
        /// `T?`, `T!` or `Optional<T>`: coded with `decodeIfPresent` and `encodeIfPresent`.
        var optional: Bool
        /// A `let` with an initial value: encoded, never decoded.
        var encodeOnly: Bool
    }

    struct Case {
        /// The case's name as written (with backticks if it has them), and its coding key.
        var name: String
        var key: String
        /// Each value's label (nil when unlabelled) and field.
        var values: [(label: String?, field: Field)]
    }
}

/// Why a declaration cannot get a generated coding.
struct ShapeError: Error {
    var message: String
    var node: Syntax
}

extension CodableShape {
    /// Types whose raw-value enums `Codable` codes as the raw value (`Character` is not
    /// `Codable`: its enums are coded by case). Written bare or as `Swift.X`.
    static let rawTypes: Set<String> = [
        "String", "Int", "Int8", "Int16", "Int32", "Int64", "Int128", "UInt", "UInt8", "UInt16", "UInt32", "UInt64",
        "UInt128", "Double", "Float", "Bool",
    ]

    /// The standard library type a type's text names, without a `Swift.` prefix.
    static func standardName(_ type: String) -> String {
        type.hasPrefix("Swift.") ? String(type.dropFirst("Swift.".count)) : type
    }

    static func of(_ declaration: some DeclGroupSyntax) throws(ShapeError) -> CodableShape {
        if let structure = declaration.as(StructDeclSyntax.self) {
            try refuseGenerics(structure.genericParameterClause)
            try refuseHandWrittenCoding(structure.memberBlock)
            try refuseRawRepresentable(structure.inheritanceClause, structure.memberBlock)
            return .structure(try fields(of: structure.memberBlock))
        }
        if let enumeration = declaration.as(EnumDeclSyntax.self) {
            try refuseGenerics(enumeration.genericParameterClause)
            try refuseHandWrittenCoding(enumeration.memberBlock)
            if let first = enumeration.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription,
               rawTypes.contains(standardName(first)) {
                return .rawValue(type: first)
            }
            try refuseRawRepresentable(enumeration.inheritanceClause, enumeration.memberBlock)
            let cases = try cases(of: enumeration.memberBlock)
            if let raw = enumeration.memberBlock.members.lazy.compactMap({ $0.decl.as(EnumCaseDeclSyntax.self) })
                .flatMap(\.elements).first(where: { $0.rawValue != nil }) {
                throw ShapeError(message: "@BinaryCodable cannot tell this enum's raw type; write it first among the inherited "
                                 + "types as one of the standard library's (String, Int, …) or drop the macro", node: Syntax(raw))
            }
            return .enumeration(cases)
        }
        throw ShapeError(message: "@BinaryCodable applies to structs and enums", node: Syntax(declaration))
    }

    private static func refuseGenerics(_ clause: GenericParameterClauseSyntax?) throws(ShapeError) {
        if let clause {
            throw ShapeError(message: "@BinaryCodable does not support generic types; their fields are coded through Codable",
                             node: Syntax(clause))
        }
    }

    /// A `RawRepresentable` type without a standard raw type is coded by `Codable` as its raw
    /// value, through the standard library, not as its cases or fields.
    private static func refuseRawRepresentable(_ inheritance: InheritanceClauseSyntax?, _ members: MemberBlockSyntax) throws(ShapeError) {
        let message = "@BinaryCodable does not support RawRepresentable types (Codable codes them as their raw value); drop the macro"
        if let clause = inheritance, let raw = clause.inheritedTypes.first(where: { standardName($0.type.trimmedDescription) == "RawRepresentable" }) {
            throw ShapeError(message: message, node: Syntax(raw))
        }
        for member in members.members {
            if let variable = member.decl.as(VariableDeclSyntax.self),
               variable.bindings.contains(where: { $0.pattern.as(IdentifierPatternSyntax.self)?.identifier.text == "rawValue" }) {
                throw ShapeError(message: message, node: Syntax(variable))
            }
        }
    }

    /// A type with its own `CodingKeys`, `init(from:)` or `encode(to:)` does not code as the
    /// synthesized conformance does, so generated code would disagree with it; members under
    /// `#if` may or may not be compiled, which the macro cannot know.
    private static func refuseHandWrittenCoding(_ members: MemberBlockSyntax) throws(ShapeError) {
        for member in members.members {
            let decl = member.decl
            if decl.is(IfConfigDeclSyntax.self) {
                throw ShapeError(message: "@BinaryCodable cannot see which #if branch is compiled; move the members out of #if or drop the macro",
                                 node: Syntax(decl))
            }
            var name: String?
            if let nested = decl.as(EnumDeclSyntax.self) { name = nested.name.text }
            if let nested = decl.as(StructDeclSyntax.self) { name = nested.name.text }
            if let alias = decl.as(TypeAliasDeclSyntax.self) { name = alias.name.text }
            if name == "CodingKeys" {
                throw ShapeError(message: "@BinaryCodable generates the synthesized coding; remove CodingKeys or the macro",
                                 node: Syntax(decl))
            }
            if let initializer = decl.as(InitializerDeclSyntax.self),
               initializer.signature.parameterClause.parameters.map(\.firstName.text) == ["from"] {
                throw ShapeError(message: "@BinaryCodable generates the synthesized coding; remove init(from:) or the macro",
                                 node: Syntax(decl))
            }
            if let function = decl.as(FunctionDeclSyntax.self), function.name.text == "encode",
               function.signature.parameterClause.parameters.map(\.firstName.text) == ["to"] {
                throw ShapeError(message: "@BinaryCodable generates the synthesized coding; remove encode(to:) or the macro",
                                 node: Syntax(decl))
            }
        }
    }

    private static func fields(of members: MemberBlockSyntax) throws(ShapeError) -> [Field] {
        var fields: [Field] = []
        for member in members.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self) else { continue }
            let modifiers = variable.modifiers.map(\.name.text)
            if modifiers.contains("static") || modifiers.contains("class") { continue }
            let isLet = variable.bindingSpecifier.tokenKind == .keyword(.let)
            // `var a, b: Int`: the type is written once, after the last name.
            var type: TypeSyntax?
            var found: [Field] = []
            for binding in variable.bindings.reversed() {
                if let accessors = binding.accessorBlock, !isObserved(accessors) { continue } // computed
                guard let identifier = binding.pattern.as(IdentifierPatternSyntax.self) else {
                    throw ShapeError(message: "@BinaryCodable needs one name per stored property", node: Syntax(binding.pattern))
                }
                if let annotated = binding.typeAnnotation?.type {
                    type = annotated
                } else if binding.initializer != nil {
                    type = nil // `var a = "s", b: Int`: `a` has a type of its own, not written
                }
                if type == nil, isLet, binding.initializer != nil {
                    // `let version = 1`: only ever encoded, so its type is not needed.
                    let name = identifier.identifier.text
                    found.append(Field(key: name.trimmingBackticks, access: "self.\(name)", type: "", optional: false, encodeOnly: true))
                    continue
                }
                guard let type else {
                    throw ShapeError(message: "@BinaryCodable needs the type of '\(identifier.identifier.text)' written out, e.g. 'var count: Int = 0'",
                                     node: Syntax(binding))
                }
                if modifiers.contains("lazy") {
                    throw ShapeError(message: "@BinaryCodable does not support lazy properties", node: Syntax(variable))
                }
                // Property wrappers (and macros) are types, capitalized; `@available` and other
                // attributes of the language do not change how the property is coded.
                if variable.attributes.contains(where: { attribute in
                    guard case .attribute(let attribute) = attribute else { return true }
                    return attribute.attributeName.trimmedDescription.first?.isUppercase ?? true
                }) {
                    throw ShapeError(message: "@BinaryCodable does not support property wrappers or attributes on stored properties",
                                     node: Syntax(variable.attributes))
                }
                let name = identifier.identifier.text
                let (wrapped, optional) = unwrapOptional(type)
                found.append(Field(key: name.trimmingBackticks, access: "self.\(name)", type: wrapped, optional: optional,
                                   encodeOnly: isLet && binding.initializer != nil))
            }
            fields += found.reversed()
        }
        return fields
    }

    /// Accessors that only observe (`willSet`, `didSet`) keep a property stored.
    private static func isObserved(_ accessors: AccessorBlockSyntax) -> Bool {
        guard case .accessors(let list) = accessors.accessors else { return false }
        return list.allSatisfy { [.keyword(.willSet), .keyword(.didSet)].contains($0.accessorSpecifier.tokenKind) }
    }

    private static func cases(of members: MemberBlockSyntax) throws(ShapeError) -> [Case] {
        var cases: [Case] = []
        for member in members.members {
            guard let declaration = member.decl.as(EnumCaseDeclSyntax.self) else { continue }
            for element in declaration.elements {
                var values: [(label: String?, field: Field)] = []
                for (index, parameter) in (element.parameterClause?.parameters ?? []).enumerated() {
                    let label = parameter.firstName.flatMap { $0.tokenKind == .wildcard ? nil : $0.text }
                    let (wrapped, optional) = unwrapOptional(parameter.type)
                    let field = Field(key: label?.trimmingBackticks ?? "_\(index)", access: "value\(index)", type: wrapped,
                                      optional: optional, encodeOnly: false)
                    // Labels need no backticks in a call, `inout` aside.
                    values.append((label.map { $0 == "`inout`" ? $0 : $0.trimmingBackticks }, field))
                }
                let name = element.name.text
                cases.append(Case(name: name, key: name.trimmingBackticks, values: values))
            }
        }
        return cases
    }

    /// The wrapped type of `T?`, `T!` and `Optional<T>`, and whether it was one.
    static func unwrapOptional(_ type: TypeSyntax) -> (type: String, optional: Bool) {
        if let optional = type.as(OptionalTypeSyntax.self) { return (optional.wrappedType.trimmedDescription, true) }
        if let unwrapped = type.as(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return (unwrapped.wrappedType.trimmedDescription, true) }
        var generic: GenericArgumentClauseSyntax?
        if let named = type.as(IdentifierTypeSyntax.self), named.name.text == "Optional" {
            generic = named.genericArgumentClause
        } else if let member = type.as(MemberTypeSyntax.self), member.name.text == "Optional",
                  member.baseType.trimmedDescription == "Swift" {
            generic = member.genericArgumentClause
        }
        if let generic, generic.arguments.count == 1, let argument = generic.arguments.first {
            return (argument.argument.trimmedDescription, true)
        }
        return (type.trimmedDescription, false)
    }
}

extension String {
    var trimmingBackticks: String {
        hasPrefix("`") && hasSuffix("`") && count >= 2 ? String(dropFirst().dropLast()) : self
    }
}
