/// Portico's version, reported as `serverInfo`, by `portico --version` and on the web pages.
public let porticoVersion = "0.2.0"
