//! Importers of FE matrix exports (work in progress).
