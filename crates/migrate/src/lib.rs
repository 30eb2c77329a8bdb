//! Tabula's startup step.
