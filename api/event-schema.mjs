// The contract describes each event of a text/event-stream with the media
// type's x-event-schema, as OpenAPI 3.2's itemSchema does. This Redocly
// plugin says that the member is a Schema, so the linter checks the schemas
// it names and counts them as used.
export default function eventSchema() {
  return {
    id: 'taskchat-event-schema',
    typeExtension: {
      oas3(types) {
        const media = types.MediaType;
        return { ...types, MediaType: { ...media, properties: { ...media.properties, 'x-event-schema': 'Schema' } } };
      },
    },
  };
}
