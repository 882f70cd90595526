-- The crawl graph: a classified page's links to other servers, for the distiller.
if page and graph ~= '' then append(hashes, record_key(GRAPH, order), order, graph) end
