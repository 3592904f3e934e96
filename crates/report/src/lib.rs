//! Reports: typed rows to CSV, CSV to PNG (plotters), Markdown tables.
